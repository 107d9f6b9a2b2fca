import type { Kysely } from 'kysely'
import { dialectOf } from './database.js'
import { withSqliteBulkContentWrites, withSqliteSubmissionsIndexRebuilt } from './dialects/sqlite.js'

/**
 * Runs a bulk write (an import) inside `transaction` so that the content version moves once rather
 * than once per row. PostgreSQL's triggers already fire once per statement; SQLite's row triggers
 * are lifted for the write (see `dialects/sqlite.ts`).
 */
export function withBulkContentWrites<DB, T>(
  transaction: Kysely<DB>,
  tables: readonly string[],
  write: () => Promise<T>,
): Promise<T> {
  const trx = transaction as unknown as Kysely<unknown>
  return dialectOf(trx) === 'sqlite' ? withSqliteBulkContentWrites(trx, tables, write) : write()
}

/**
 * Loads many submissions inside `transaction` the cheapest way the dialect allows: SQLite drops
 * the submissions order index and rebuilds it once; PostgreSQL keeps its index as it is.
 */
export function withSubmissionsIndexRebuilt<DB, T>(
  transaction: Kysely<DB>,
  write: () => Promise<T>,
): Promise<T> {
  const trx = transaction as unknown as Kysely<unknown>
  return dialectOf(trx) === 'sqlite' ? withSqliteSubmissionsIndexRebuilt(trx, write) : write()
}
