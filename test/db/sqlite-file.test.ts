import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.js'
import { PAGE_SIZE } from '../../src/db/dialects/sqlite.js'
import { openSqliteConnection, type SqliteConnection } from '../../src/db/dialects/sqlite-driver.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { createServices } from '../../src/services/index.js'
import { buildForm, buildSubmission } from '../factories.js'
import { TEST_DIALECT } from '../harness.js'

const dir = mkdtempSync(join(tmpdir(), 'lectern-sqlite-file-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The page size and journal mode SQLite reports for `file`, read by a connection of its own. */
function fileFormat(file: string): { pageSize: number; journalMode: string } {
  const sqlite = openSqliteConnection(file, { readonly: true })
  try {
    return {
      pageSize: pragma(sqlite, 'page_size') as number,
      journalMode: pragma(sqlite, 'journal_mode') as string,
    }
  } finally {
    sqlite.close()
  }
}

/** The value of the pragma `name`, read as a one-column row. */
function pragma(sqlite: SqliteConnection, name: string): unknown {
  const [row] = sqlite.prepare(`pragma ${name}`).all([]) as Record<string, unknown>[]
  return row?.[name]
}

// A property of SQLite files alone: run once, in the SQLite pass of the suite.
describe.runIf(TEST_DIALECT === 'sqlite')('the SQLite file', () => {
  it('is made with 8 KiB pages in WAL mode when Lectern creates it', async () => {
    const file = join(dir, 'new.db')
    const handle = openDatabase(`sqlite:${file}`)
    await migrateToLatest(handle)
    await handle.close()
    expect(PAGE_SIZE).toBe(8192)
    expect(fileFormat(file)).toEqual({ pageSize: PAGE_SIZE, journalMode: 'wal' })
  })

  it('keeps the page size of a file made before, and serves its content', async () => {
    const file = join(dir, 'older.db')
    const older = openSqliteConnection(file)
    older.exec('pragma page_size = 4096')
    older.exec('pragma journal_mode = WAL')
    older.exec('create table made_before (id integer primary key)')
    older.close()

    const handle = openDatabase(`sqlite:${file}`)
    await migrateToLatest(handle)
    const services = createServices(handle)
    const form = await buildForm(handle.db)
    for (let i = 0; i < 30; i++) await buildSubmission(handle.db, { formId: form.id })
    const page = await services.content.listSubmissionsForForm(form.id, { page: 2, pageSize: 20 })
    await handle.close()

    expect(page.total).toBe(30)
    expect(page.items).toHaveLength(10)
    expect(fileFormat(file)).toEqual({ pageSize: 4096, journalMode: 'wal' })
  })

  it('is closed by close() even when only prepared statements ran on it', async () => {
    const file = join(dir, 'prepared-only.db')
    const setup = openDatabase(`sqlite:${file}`)
    await migrateToLatest(setup)
    await setup.close()

    const handle = openDatabase(`sqlite:${file}`)
    const readForms = handle.prepare(handle.db.selectFrom('forms').select('id'))
    expect(await readForms()).toEqual([])
    expect(existsSync(`${file}-wal`)).toBe(true)
    await handle.close()
    // SQLite removes the WAL and its index when the last connection to the file closes.
    expect([existsSync(`${file}-wal`), existsSync(`${file}-shm`)]).toEqual([false, false])
  })
})
