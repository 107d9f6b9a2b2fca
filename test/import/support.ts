import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../../src/db/client.js'
import type { Database } from '../../src/db/tables.js'
import { createImporter, type Importer } from '../../src/services/importer.js'
import { createTestDatabase } from '../harness.js'

export interface ImportDatabase {
  dir: string
  database: DatabaseHandle
  db: Kysely<Database>
  importer: Importer
  close(): Promise<void>
}

/** A fresh, migrated database of the run's dialect, a directory for import files, and an importer. */
export async function openImportDatabase(prefix: string): Promise<ImportDatabase> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const testDatabase = await createTestDatabase(dir)
  const database = openDatabase(testDatabase.url)
  await migrateToLatest(database)
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
