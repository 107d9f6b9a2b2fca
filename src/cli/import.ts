import { plural } from '../errors.js'
import { databaseLocation, withServices } from './context.js'

/** `lectern import <file>`: validates everything, then writes everything or nothing. */
export async function runImport(file: string): Promise<void> {
  await withServices(async ({ importer }, database) => {
    const result = await importer.importFile(file)
    for (const warning of result.warnings) console.error(`warning: ${warning}`)
    const { forms, submissions, pages, redirects } = result.counts
    const count = (n: number, noun: string) => `${n} ${plural(n, noun)}`
    console.log(
      `Imported ${count(forms, 'form')}, ${count(submissions, 'submission')}, ${count(pages, 'page')} and ${count(redirects, 'redirect')} from ${file} into ${databaseLocation(database)}`,
    )
  })
}
