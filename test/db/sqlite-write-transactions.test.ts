import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.js'
import { startSqliteWorker } from '../../src/db/dialects/sqlite-checkpoints.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { buildForm } from '../factories.js'
import { TEST_DIALECT } from '../harness.js'

const dir = mkdtempSync(join(tmpdir(), 'lectern-sqlite-writes-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * Runs `statement` on `file` from a connection in a worker thread, as another process would: it
 * waits for SQLite's write lock there (busy timeout 5 s) without stopping this thread's event loop.
 * Resolves with the error's message if it failed.
 */
function writeFromAnotherConnection(file: string, statement: string): Promise<string | null> {
  const worker = startSqliteWorker(
    `const { parentPort, workerData: w } = require('node:worker_threads')
process.emitWarning = () => {}
const db = w.driver === 'node:sqlite' ? new (require('node:sqlite').DatabaseSync)(w.file) : new (require(w.module))(w.file)
try {
  db.exec('pragma busy_timeout = 5000')
  db.exec(w.statement)
  parentPort.postMessage(null)
} catch (error) {
  parentPort.postMessage(String(error.message))
} finally {
  db.close()
}`,
    { file, statement },
  )
  return new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
}

describe.runIf(TEST_DIALECT === 'sqlite')('a write transaction on SQLite', () => {
  it('reads, lets another connection commit meanwhile, then writes without "database is locked"', async () => {
    const file = join(dir, 'read-then-write.db')
    const handle = openDatabase(`sqlite:${file}`)
    try {
      await migrateToLatest(handle)
      let other: Promise<string | null> | undefined
      await handle.db.transaction().execute(async (trx) => {
        await trx.selectFrom('forms').select('id').execute()
        other = writeFromAnotherConnection(file, 'create table written_meanwhile (id integer primary key)')
        // Long enough for the other connection to commit, were it not waiting for this transaction.
        await new Promise((resolve) => setTimeout(resolve, 300))
        await buildForm(trx, { title: 'Written after the read' })
      })
      expect(await other).toBeNull()
      const forms = await handle.db.selectFrom('forms').select('title').execute()
      expect(forms).toEqual([{ title: 'Written after the read' }])
      const { rows } = await sql`select name from sqlite_master where name = 'written_meanwhile'`.execute(
        handle.db,
      )
      expect(rows).toHaveLength(1)
    } finally {
      await handle.close()
    }
  })
})
