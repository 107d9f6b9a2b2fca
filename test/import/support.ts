import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'
import { afterEach, beforeEach, expect } from 'vitest'
import { BULK_STATEMENT_TIMEOUT_MS, type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { type Database, SUBMISSION_COLUMNS } from '../../src/db/tables.js'
import { createImporter, ImportError, type Importer } from '../../src/services/import/index.js'
import { createMigratedTestDatabase, TEST_DIALECT } from '../harness.js'

export interface ImportDatabase {
  dir: string
  database: DatabaseHandle
  db: Kysely<Database>
  importer: Importer
  close(): Promise<void>
}

/** A fresh, migrated database of the run's dialect, a directory for import files, and an importer. */
export async function openImportDatabase(
  prefix: string,
  options: { statementTimeoutMs?: number } = {},
): Promise<ImportDatabase> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const testDatabase = await createMigratedTestDatabase(dir)
  const database = openDatabase(testDatabase.url, options)
  return {
    dir,
    database,
    db: database.db,
    importer: createImporter(database.db),
    async close() {
      await database.close()
      await testDatabase.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The error an import was refused with; fails the test if it was not an `ImportError`. */
export async function refusal(promise: Promise<unknown>): Promise<ImportError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(ImportError)
  return error as ImportError
}

/** Every content row, in id order: equal snapshots mean an import changed nothing. */
export async function contentSnapshot(db: Kysely<Database>) {
  return {
    forms: await db.selectFrom('forms').selectAll().orderBy('id').execute(),
    // `json` is derived from these (and tested in test/api/submission-json.test.ts).
    submissions: await db.selectFrom('submissions').select(SUBMISSION_COLUMNS).orderBy('id').execute(),
    pages: await db.selectFrom('pages').selectAll().orderBy('id').execute(),
    redirects: await db.selectFrom('redirects').selectAll().orderBy('id').execute(),
  }
}

/**
 * Makes the database itself refuse any submission whose notes say `explode`, with a trigger: a
 * failure late in a write, after other rows went in, that only a real rollback undoes.
 */
export async function refuseSubmissionsNotedExplode(db: Kysely<Database>): Promise<void> {
  if (TEST_DIALECT === 'sqlite') {
    await sql`CREATE TRIGGER refuse_marked BEFORE INSERT ON submissions WHEN NEW.notes = 'explode'
      BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END`.execute(db)
    return
  }
  await sql`CREATE FUNCTION refuse_marked() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.notes = 'explode' THEN RAISE EXCEPTION 'refused by trigger'; END IF; RETURN NEW; END $$`.execute(
    db,
  )
  await sql`CREATE TRIGGER refuse_marked BEFORE INSERT ON submissions
    FOR EACH ROW EXECUTE FUNCTION refuse_marked()`.execute(db)
}

/** What each test of a file using {@link useCommandLineImportDatabase} gets, fresh. */
export interface CommandLineImportDatabase {
  opened: ImportDatabase
  db: Kysely<Database>
  /** The importer of `lectern import`, which has its process to itself. */
  commandLine: Importer
  /** Writes `lines` as the NDJSON file `import.ndjson` in the test's directory, and returns its path. */
  ndjsonFile(lines: readonly object[]): string
}

/**
 * Gives every test of the calling file a fresh database and the importer of `lectern import`;
 * read the fields inside tests (they are replaced before each one).
 */
export function useCommandLineImportDatabase(prefix: string): CommandLineImportDatabase {
  const current = {} as CommandLineImportDatabase
  beforeEach(async () => {
    // As `lectern import` opens it: a bulk load is one long statement.
    const opened = await openImportDatabase(prefix, { statementTimeoutMs: BULK_STATEMENT_TIMEOUT_MS })
    Object.assign(current, {
      opened,
      db: opened.db,
      commandLine: createImporter(opened.db, { ownProcess: true }),
      ndjsonFile(lines: readonly object[]) {
        const path = join(opened.dir, 'import.ndjson')
        writeFileSync(path, lines.map((line) => JSON.stringify(line)).join('\n'))
        return path
      },
    })
  })
  afterEach(() => current.opened.close())
  return current
}
