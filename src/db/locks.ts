import type { Transaction } from 'kysely'
import { now } from '../time.js'
import type { Executor } from './executor.js'
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

/**
 * Takes the lock `name` at `at` only if it was last taken at least `idleMs` before (or never): true
 * when this caller took it. Held until `trx` ends; it spaces out a periodic task done by one
 * instance at a time.
 */
export async function takeLockIfIdle(
  trx: Transaction<Database>,
  name: LockName,
  at: number,
  idleMs: number,
): Promise<boolean> {
  const taken = await trx
    .updateTable('locks')
    .set({ acquired_at: new Date(at).toISOString() })
    .where('name', '=', name)
    .where((eb) =>
      eb.or([eb('acquired_at', 'is', null), eb('acquired_at', '<=', new Date(at - idleMs).toISOString())]),
    )
    .executeTakeFirst()
  return Number(taken.numUpdatedRows) > 0
}

/**
 * Takes the lease `name` at `at` if it was last taken at or before `expiredAt` (or never): true
 * when this caller took it. One conditional update of the lock's row, so two instances cannot both
 * win; unlike {@link takeLock}, no transaction holds it: the lease lasts until it is taken again.
 */
export async function takeLease(
  db: Executor,
  name: LockName,
  at: string,
  expiredAt: string,
): Promise<boolean> {
  const taken = await db
    .updateTable('locks')
    .set({ acquired_at: at })
    .where('name', '=', name)
    .where((eb) => eb.or([eb('acquired_at', 'is', null), eb('acquired_at', '<=', expiredAt)]))
    .executeTakeFirst()
  return Number(taken.numUpdatedRows) > 0
}
