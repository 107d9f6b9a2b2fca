import { basename } from 'node:path'
import type { Kysely } from 'kysely'
import type { BulkWriteOptions } from '../../db/bulk-writes.js'
import type { Database } from '../../db/tables.js'
import { type Actor, recordAudit } from '../audit.js'
import { ImportError } from './errors.js'
import type { KindCounts } from './kinds.js'
import { planImport } from './plan.js'
import { fileSource, jsonSource, type RecordSource } from './sources.js'
import { writeImport } from './writer.js'

export { ImportError, MAX_LISTED_PROBLEMS } from './errors.js'
export type { ImportKind, KindCounts } from './kinds.js'

/**
 * What an import did. `counts` are the records read per kind; each record either `created` a row
 * or `updated` one (a row that existed before, or that an earlier record of the same file wrote),
 * so `created + updated = counts` for every kind.
 */
export interface ImportResult {
  counts: KindCounts
  created: KindCounts
  updated: KindCounts
  /** Things that were imported but deserve a look, such as redirect chains; each with its location. */
  warnings: string[]
}

/** The JSON import format: any key may be absent. Each record has the API's camelCase fields. */
export interface ImportDocument {
  forms?: unknown[]
  submissions?: unknown[]
  pages?: unknown[]
  redirects?: unknown[]
}

/**
 * How far an import has got: `checking` (the validating read), `writing` (the reads that write;
 * `done` counts the records of the current read), `finishing` (what follows the last read: sorted
 * moves, index rebuilds, the commit). `total` is known once the check has read every record.
 */
export interface ImportProgress {
  phase: 'checking' | 'writing' | 'finishing'
  done: number
  total?: number
}

/**
 * How an importer may use the database: `ownProcess` when the import is all its process does
 * (`lectern import`), so that it may write with more memory and larger steps than an import inside
 * a server, whose event loop must keep turning.
 */
export type ImporterOptions = BulkWriteOptions

/**
 * The content importer (docs/cli.md, "Import format"). It validates everything first, then writes everything in one
 * transaction, or throws {@link ImportError} listing every problem (and the warnings a successful
 * import would have returned) and writes nothing.
 */
export function createImporter(db: Kysely<Database>, options: ImporterOptions = {}) {
  return {
    /**
     * Imports a `.json` document or a `.ndjson` file (one record per line with a `kind`). NDJSON is
     * streamed twice, validating then writing, and never held in memory: memory grows with the
     * number of forms, pages and redirects, not of submissions. A `.json` file is parsed whole, so
     * large imports belong in NDJSON.
     */
    async importFile(
      path: string,
      actor: Actor = 'cli',
      onProgress?: (progress: ImportProgress) => void,
    ): Promise<ImportResult> {
      const source = await fileSource(path)
      return runImport(
        db,
        onProgress ? reportingProgress(source, onProgress) : source,
        actor,
        basename(path),
        options,
      )
    },

    /**
     * Imports a document already in memory, shaped like {@link ImportDocument} (parsed by a caller
     * or built by the demo); it is validated exactly like a JSON file, and its problems are located
     * the same way: `pages[2].path: …`.
     */
    importRecords(document: unknown, actor: Actor = 'cli'): Promise<ImportResult> {
      return runImport(db, jsonSource(document), actor, 'document', options)
    },
  }
}

export type Importer = ReturnType<typeof createImporter>

async function runImport(
  db: Kysely<Database>,
  source: RecordSource,
  actor: Actor,
  target: string,
  options: ImporterOptions,
): Promise<ImportResult> {
  const plan = await planImport(db, source)
  const warnings = plan.warnings.listed('warning')
  const { created, updated } = await writeImport(
    db,
    plan,
    source,
    (trx, written) =>
      recordAudit(trx, {
        actor,
        action: 'content.imported',
        target,
        detail: { counts: plan.counts, ...written },
      }),
    options,
  ).catch((error: unknown) => {
    // Refused while writing (the file or the database changed meanwhile): what the check found
    // worth a look still stands, and is listed with the refusal as with any other.
    if (error instanceof ImportError && error.warnings.length === 0 && warnings.length > 0)
      throw new ImportError(error.problems, error.problemCount, warnings)
    throw error
  })
  return { counts: plan.counts, created, updated, warnings }
}

/**
 * `source`, telling `onProgress` after each batch it hands out: its first read is the check, the
 * later ones write, and once a later read has reached the end only finishing work is left.
 */
function reportingProgress(
  source: RecordSource,
  onProgress: (progress: ImportProgress) => void,
): RecordSource {
  let reads = 0
  let total: number | undefined
  return {
    ...source,
    async *entries() {
      const phase = reads++ === 0 ? 'checking' : 'writing'
      let done = 0
      onProgress({ phase, done, ...(total === undefined ? {} : { total }) })
      for await (const batch of source.entries()) {
        done += batch.length
        onProgress({ phase, done, ...(total === undefined ? {} : { total }) })
        yield batch
      }
      if (phase === 'checking') total = done
      else onProgress({ phase: 'finishing', done, ...(total === undefined ? {} : { total }) })
    },
  }
}
