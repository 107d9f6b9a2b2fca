import type { Transaction } from 'kysely'
import { now } from '../time.js'
import type { Database, LockName } from './tables.js'

/**
 * Holds the lock `name` until `trx` ends, so that writers of one kind take turns across processes
 * and instances. The update takes the row's lock on PostgreSQL and the write lock on SQLite; as the
 * transaction's first statement it also makes every later read see what earlier holders committed.
 * It is portable SQL on purpose: no advisory locks, no `SELECT … FOR UPDATE` (SQLite has neither).
 */
export async function takeLock(trx: Transaction<Database>, name: LockName): Promise<void> {
  await trx.updateTable('locks').set({ acquired_at: now() }).where('name', '=', name).execute()
}
