import type { Kysely, Transaction } from 'kysely'
import {
  ANALYZE_AFTER_ROWS,
  refreshStatistics,
  withBulkContentWrites,
  withCheckpointInWorker,
} from '../../db/bulk-writes.js'
import { readKindVersion } from '../../db/content-version.js'
import { UniqueViolationError } from '../../db/errors.js'
import { takeLock } from '../../db/locks.js'
import type { Database } from '../../db/tables.js'
import { ValidationError } from '../../errors.js'

/** A (whole) write is tried again this often when other changes keep landing while it is checked. */
const OPTIMISTIC_TRIES = 3

/**
 * Runs `work` holding the `redirects` lock, so two changes made at once (on any instance) are
 * checked one after the other and cannot close a loop between them.
 */
export async function locked<T>(
  db: Kysely<Database>,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  try {
    return await db.transaction().execute(async (trx) => {
      await takeLock(trx, 'redirects')
      return work(trx)
    })
  } catch (error) {
    // Only a writer that skips the lock (a bulk import) can take a path from under us.
    if (error instanceof UniqueViolationError)
      throw new ValidationError('Another change took one of these paths meanwhile; please try again')
    throw error
  }
}

/** A write of many redirects moves the content version once, not once per row (see `bulk-writes.ts`). */
function bulk<T>(trx: Transaction<Database>, write: () => Promise<T>): Promise<T> {
  return withBulkContentWrites(trx, ['redirects'], write)
}

/**
 * Runs `prepare` (which reads every redirect, outside any transaction so that readers are not
 * held up), then `commit` under the lock, if no content changed in between; otherwise again.
 * The last try prepares under the lock too, so a busy site still gets its change made.
 */
export async function optimistic<P, T>(
  db: Kysely<Database>,
  prepare: (db: Kysely<Database>) => Promise<P>,
  commit: (trx: Transaction<Database>, prepared: P) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; attempt < OPTIMISTIC_TRIES; attempt++) {
    const version = await readKindVersion(db, 'redirects')
    const prepared = await prepare(db)
    const outcome = await locked(db, async (trx) =>
      (await readKindVersion(trx, 'redirects')) === version
        ? { done: true as const, value: await bulk(trx, () => commit(trx, prepared)) }
        : { done: false as const },
    )
    if (outcome.done) return outcome.value
  }
  return locked(db, async (trx) => {
    const prepared = await prepare(trx)
    return bulk(trx, () => commit(trx, prepared))
  })
}

/**
 * Runs a write of many redirects, whose commit leaves SQLite's checkpoint to a worker thread;
 * `changed` says how many rows it changed, so that PostgreSQL's statistics follow a large one.
 */
export async function bulkCommit<T>(
  db: Kysely<Database>,
  work: () => Promise<T>,
  changed: (result: T) => number,
): Promise<T> {
  const result = await withCheckpointInWorker(db, work)
  if (changed(result) >= ANALYZE_AFTER_ROWS) await refreshStatistics(db, ['redirects'])
  return result
}
