import { plural } from '../errors.js'
import { createImporter, ImportError, type ImportResult } from '../services/import/index.js'
import { databaseLocation, withServices } from './context.js'
import { type CliIo, writeLine } from './io.js'
import { progressLine } from './progress.js'

/**
 * `lectern import <file>`: validates everything, then writes everything or nothing. On a terminal
 * its progress is one line on stderr, redrawn in place, unless `--quiet`. Its warnings go to stderr
 * before the outcome, whether the import succeeded or was refused.
 */
export async function runImport(io: CliIo, file: string, options: { quiet?: boolean } = {}): Promise<void> {
  const progress = io.stderr.isTTY && !options.quiet ? progressLine(io.stderr) : undefined
  await withServices(
    io,
    async (_services, database) => {
      // The import is all this process does: it may write with a large page cache and run statements
      // of many seconds (see `ownProcess`).
      const importer = createImporter(database.db, { ownProcess: true })
      let result: ImportResult
      try {
        result = await importer.importFile(file, 'cli', progress?.update)
      } catch (error) {
        // A refused file's warnings come first too, so that its problems stay the last lines and
        // one run shows everything to look at.
        progress?.clear()
        if (error instanceof ImportError) writeWarnings(io, error.warnings)
        throw error
      }
      progress?.clear()
      writeWarnings(io, result.warnings)
      const { forms, submissions, pages, redirects } = result.counts
      const count = (n: number, noun: string) => `${n} ${plural(n, noun)}`
      writeLine(
        io.stdout,
        `Imported ${count(forms, 'form')}, ${count(submissions, 'submission')}, ${count(pages, 'page')} and ${count(redirects, 'redirect')} from ${file} into ${databaseLocation(database)}`,
      )
    },
    { bulk: true, create: true },
  )
}

/** One `warning: …` line on stderr per warning (already bounded by the importer). */
function writeWarnings(io: CliIo, warnings: readonly string[]): void {
  for (const warning of warnings) writeLine(io.stderr, `warning: ${warning}`)
}
