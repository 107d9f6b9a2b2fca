import { withServices } from './context.js'

/** `lectern import <file>`: validates everything, then writes everything or nothing. */
export async function runImport(file: string): Promise<void> {
  await withServices(async ({ importer }) => {
    const result = await importer.importFile(file)
    for (const warning of result.warnings) console.error(`warning: ${warning}`)
    const { forms, submissions, pages, redirects } = result.counts
    console.log(
      `Imported ${forms} forms, ${submissions} submissions, ${pages} pages and ${redirects} redirects from ${file}`,
    )
  })
}
