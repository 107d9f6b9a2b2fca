import { type Kysely, sql } from 'kysely'
import { dialectOf } from './database.js'
import { withSqliteBulkContentWrites, withSqliteSubmissionsIndexRebuilt } from './dialects/sqlite.js'
import { checkpointInWorker } from './dialects/sqlite-checkpoints.js'

/**
 * SQLite page cache (KiB) while a bulk write runs inside a serving process. Pages beyond it are
 * written to the WAL by the statements that dirty them, which already take turns with the event
 * loop; the COMMIT writes only what is left, so it takes milliseconds instead of writing the
 * default 16 MiB cache at once.
 */
const BULK_CACHE_KIB = 2000

/**
 * SQLite page cache (KiB) while a bulk write runs in a process of its own (`lectern import`):
 * no event loop waits on its COMMIT, and a larger cache spares inserts, whose ids land anywhere in
 * the primary-key index, many page reads from the WAL and spills to it. With the secondary indexes
 * rebuilt (see {@link withSubmissionsIndexRebuilt}) the benchmark's million submissions took about
 * half the time. It also sizes each run of SQLite's sorter (one per sorter thread, see
 * {@link SORTER_THREADS}): with the sorted load, the benchmark's million took 26.7–28.7 s at
 * 32 MiB with a peak RSS of 286–294 MB, close to the 300 MB an import may use; 28.4 s and 264 MB at
 * 24 MiB; 29.7 s and 216 MB at 16 MiB.
 */
export const OWN_PROCESS_CACHE_KIB = 24 * 1024

/**
 * Helper threads SQLite's sorter may start during a bulk write in a process of its own: the sorted
 * load and the index rebuilds are sorts, and a second core took the million from 31–33 s to 27–29 s.
 */
const SORTER_THREADS = 2

/** How a bulk write may use the database's resources. */
export interface BulkWriteOptions {
  /**
   * The write is all its process does (the CLI): it may hold a large page cache, because no
   * server's event loop waits on its COMMIT. Otherwise the cache is kept small (see {@link BULK_CACHE_KIB}).
   */
  ownProcess?: boolean
}

/**
 * Runs a bulk write (an import) inside `transaction` so that each content version moves once rather
 * than once per row. PostgreSQL's triggers already fire once per statement; SQLite's row triggers
 * are lifted for the write (see `dialects/sqlite.ts`), and its page cache is sized for the write
 * meanwhile (see {@link BulkWriteOptions}).
 */
export async function withBulkContentWrites<DB, T>(
  transaction: Kysely<DB>,
  tables: readonly string[],
  write: () => Promise<T>,
  options: BulkWriteOptions = {},
): Promise<T> {
  const trx = transaction as unknown as Kysely<unknown>
  if (dialectOf(trx) !== 'sqlite') return write()
  const bulkCache = options.ownProcess === true ? OWN_PROCESS_CACHE_KIB : BULK_CACHE_KIB
  const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(trx)
  const cacheSize = Number(rows[0]?.cache_size ?? -bulkCache)
  await sql`pragma cache_size = ${sql.raw(String(-bulkCache))}`.execute(trx)
  // The sorts of a bulk write (the sorted load, the index rebuilds) may use a second core.
  if (options.ownProcess === true) await sql`pragma threads = ${sql.raw(String(SORTER_THREADS))}`.execute(trx)
  try {
    return await withSqliteBulkContentWrites(trx, tables, write)
  } finally {
    await sql`pragma cache_size = ${sql.raw(String(Math.trunc(cacheSize)))}`.execute(trx)
    if (options.ownProcess === true) await sql`pragma threads = 0`.execute(trx)
  }
}

/**
 * Loads many submissions inside `transaction` the cheapest way the dialect allows: SQLite drops
 * every secondary index of submissions (the order index and the partial ones of unread and starred
 * submissions) and rebuilds each once from its own definition, one sort each instead of a million
 * inserts at random places; PostgreSQL keeps its indexes as they are. The primary key's index
 * stays: the upserts need it. DDL is transactional in SQLite, so a rollback brings the indexes back.
 */
export function withSubmissionsIndexRebuilt<DB, T>(
  transaction: Kysely<DB>,
  write: () => Promise<T>,
): Promise<T> {
  const trx = transaction as unknown as Kysely<unknown>
  return dialectOf(trx) === 'sqlite' ? withSqliteSubmissionsIndexRebuilt(trx, write) : write()
}

/**
 * Whether a bulk load of submissions is staged and stored in list order (see
 * `SortedSubmissionLoad`). Its move is one statement of many seconds, which only a process of its
 * own (`lectern import`, with its long statement timeout) may run: on SQLite it would hold a
 * server's event loop, and on PostgreSQL it would outlast a server's statement timeout. Inside a
 * server the rows go in as they come, in statements of a few hundred rows.
 */
export function storesBulkLoadsSorted(options: BulkWriteOptions): boolean {
  return options.ownProcess === true
}

/** Rows one bulk write must change in a table before PostgreSQL's statistics of it are refreshed. */
export const ANALYZE_AFTER_ROWS = 10_000

/**
 * Brings PostgreSQL's bookkeeping of `tables` up to date after a committed bulk write changed many
 * of their rows: `VACUUM (ANALYZE)`, outside any transaction (`db` must not be one). Autovacuum
 * would, but only a while later. Until then the planner takes a table that grew by a million rows
 * for a small one (a keyed read of 1,000 redirects became a sort of every row: 636 ms per read, 7 ms
 * after `ANALYZE`), and, with the visibility map not yet set, an index-only scan still reads every
 * row from the table (the position index of a million submissions: 3.2 s, over the statement
 * timeout, against 0.5 s after `VACUUM`). SQLite plans from its indexes alone: nothing to do.
 */
export async function refreshStatistics<DB>(db: Kysely<DB>, tables: readonly string[]): Promise<void> {
  const executor = db as unknown as Kysely<unknown>
  if (dialectOf(executor) !== 'postgres') return
  for (const table of tables) await sql`vacuum (analyze) ${sql.table(table)}`.execute(executor)
}

/**
 * Bulk writes under way per SQLite database, and the automatic checkpoint they held back: it stays
 * off until the last ends, then comes back as it was.
 */
const deferring = new WeakMap<object, { writes: number; pages: Promise<number> }>()

/**
 * Runs `work` (which commits a bulk write) on `db` with SQLite's automatic WAL checkpoint held back,
 * then checkpoints in a worker thread. A commit that leaves a large WAL would otherwise copy every
 * page it wrote back into the database file before returning, synchronously: some 50 ms for 100,000
 * redirects on an idle machine and several times that on a busy one, with the event loop stopped.
 * The worker opens the file on its own connection, so the copy runs beside the event loop and
 * readers and writers go on (WAL lets a checkpoint run alongside them). Nothing to do on PostgreSQL.
 */
export async function withCheckpointInWorker<DB, T>(db: Kysely<DB>, work: () => Promise<T>): Promise<T> {
  const executor = db as unknown as Kysely<unknown>
  if (dialectOf(executor) !== 'sqlite') return work()
  const { rows } = await sql<{
    file: string
  }>`select file from pragma_database_list where name = 'main'`.execute(executor)
  const file = rows[0]?.file ?? ''
  // An in-memory database has no WAL to checkpoint.
  if (file === '') return work()
  let held = deferring.get(db)
  if (held === undefined) {
    // Noted before any await, so that a bulk write starting meanwhile shares it.
    held = {
      writes: 0,
      pages: sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`
        .execute(executor)
        .then(({ rows: setting }) => Number(setting[0]?.wal_autocheckpoint ?? 1000))
        .catch((error: unknown) => {
          deferring.delete(db)
          throw error
        }),
    }
    deferring.set(db, held)
  }
  const pages = await held.pages
  held.writes += 1
  await sql`pragma wal_autocheckpoint = 0`.execute(executor)
  try {
    return await work()
  } finally {
    held.writes -= 1
    if (held.writes === 0) {
      deferring.delete(db)
      await sql`pragma wal_autocheckpoint = ${sql.raw(String(pages))}`.execute(executor)
      await checkpointInWorker(file)
    }
  }
}
