import { existsSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import type SQLite from 'better-sqlite3'
import { type Compilable, Kysely, type SqliteDatabase, SqliteDialect, sql } from 'kysely'
import { LRUCache } from 'lru-cache'
import { ValidationError } from '../../errors.js'
import type { DatabaseHandle } from '../database.js'
import { type DriverErrorCodes, TranslatingDialect, translateDatabaseError } from '../errors.js'
import { bindValues, type PreparedQuery } from '../prepared.js'
import type { Database } from '../tables.js'

// The driver is loaded only when this dialect is used: an instance on PostgreSQL does not pay for it.
const require = createRequire(import.meta.url)

export const SQLITE_ERROR_CODES: DriverErrorCodes = {
  unavailable: new Set(['SQLITE_BUSY', 'SQLITE_CANTOPEN']),
  unique: new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']),
  invalidText: new Set(),
}

/**
 * The page size of a file `openSqlite` creates. Random pages of the benchmark's 1M form cost the
 * server 10–23% less CPU than with 4 KiB pages (16 KiB: about the same gain, but 44 MB more peak
 * memory in `lectern import` of the million, against 17 MB at 8 KiB).
 */
export const PAGE_SIZE = 8_192

/**
 * Opens the SQLite file `file`, or `:memory:`, creating it and its directory if needed unless
 * `create` is false.
 */
export function openSqlite(file: string, { create = true }: { create?: boolean } = {}): DatabaseHandle {
  if (file === '')
    throw new ValidationError('DATABASE_URL sqlite: needs a file name, e.g. sqlite:./data/lectern.db')
  const path = file === ':memory:' ? file : resolve(file)
  if (path !== ':memory:' && !create && !existsSync(path))
    throw new ValidationError(
      `The database file ${path} does not exist: check DATABASE_URL (sqlite:${file}), or create it with \`lectern migrate\``,
    )
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const Driver = require('better-sqlite3') as typeof SQLite
  const sqlite = new Driver(path)
  // A new file gets pages of 8 KiB instead of 4: a page of submissions (rows stored in list order) is
  // then read in half the reads, each a system call. SQLite applies it only to a file without
  // tables, and only before WAL mode is set; an older file keeps its size.
  sqlite.pragma(`page_size = ${PAGE_SIZE}`)
  // WAL lets the CLI write while a server reads; busy_timeout makes writers queue instead of failing.
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('synchronous = NORMAL')
  const db = new Kysely<Database>({
    dialect: new TranslatingDialect(
      new SqliteDialect({ database: keepingWriteStatements(sqlite) }),
      SQLITE_ERROR_CODES,
    ),
  })
  return {
    db,
    dialect: 'sqlite',
    description: `sqlite:${path}`,
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    prepare<Row>(query: Compilable<Row>): PreparedQuery<Row> {
      const compiled = query.compile()
      let statement: SQLite.Statement | undefined
      return async (values = {}) => {
        try {
          // Prepared on first use, so a query may be defined before its table exists.
          statement ??= sqlite.prepare(compiled.sql)
          return statement.all(...bindValues(compiled.parameters, values)) as Row[]
        } catch (error) {
          throw translateDatabaseError(error, SQLITE_ERROR_CODES)
        }
      }
    },
    json: {
      joined: (column) => sql<string | null>`group_concat(${sql.ref(column)}, ',')`,
    },
    ping: async () => {
      await sql`select 1`.execute(db)
    },
    close: () => db.destroy(),
  }
}

/** Write statements kept prepared per connection, by SQL text. */
const KEPT_WRITE_STATEMENTS = 64

/**
 * The connection as Kysely sees it, keeping its most recent write statements prepared: Kysely
 * prepares every query it runs anew, and for the importer's multi-row statements (500 rows, up to
 * 8,000 values) SQLite's parsing and planning was a sixth of the import's CPU, for the same few
 * SQL texts over and over. Only statements that return no rows are kept: Kysely runs those to
 * completion at once, whereas a reader may be iterated while the same text is asked for again.
 */
function keepingWriteStatements(sqlite: SQLite.Database): SqliteDatabase {
  const writes = new LRUCache<string, SQLite.Statement>({ max: KEPT_WRITE_STATEMENTS })
  return {
    prepare(text: string) {
      const kept = writes.get(text)
      if (kept !== undefined) return kept
      const statement = sqlite.prepare(text)
      if (!statement.reader) writes.set(text, statement)
      return statement
    },
    close: () => {
      writes.clear()
      sqlite.close()
    },
  }
}

const CONTENT_VERSION_OPERATIONS = ['insert', 'update', 'delete'] as const

/**
 * Runs a bulk write (an import) inside `trx` without SQLite's per-row content-version triggers,
 * moving the version once at the end instead: a million-row import would otherwise pay a million
 * extra updates. SQLite DDL is transactional and only one writer holds the database, so no other
 * write can happen while the triggers are lifted, and a rollback restores them. The triggers are
 * recreated exactly as migration 003 made them.
 */
export async function withSqliteBulkContentWrites<T>(
  trx: Kysely<unknown>,
  tables: readonly string[],
  write: () => Promise<T>,
): Promise<T> {
  for (const table of tables)
    for (const operation of CONTENT_VERSION_OPERATIONS)
      await sql`drop trigger if exists ${sql.id(`${table}_${operation}_content_version`)}`.execute(trx)
  const result = await write()
  await sql`update content_version set version = version + 1 where id = 1`.execute(trx)
  for (const table of tables)
    for (const operation of CONTENT_VERSION_OPERATIONS)
      await sql`create trigger ${sql.id(`${table}_${operation}_content_version`)}
        after ${sql.raw(operation)} on ${sql.table(table)}
        begin update content_version set version = version + 1 where id = 1; end`.execute(trx)
  return result
}

/**
 * Loads many submissions inside `trx` with every secondary index of submissions (the order index
 * and the partial ones of unread and starred submissions) dropped and rebuilt once at the end from
 * its own stored definition: one sort each is much cheaper than keeping them up to date row by row
 * in random order. The primary key's index stays (the upserts need it). Transactional like the
 * trigger lifting above, so a rollback brings the indexes back.
 */
export async function withSqliteSubmissionsIndexRebuilt<T>(
  trx: Kysely<unknown>,
  write: () => Promise<T>,
): Promise<T> {
  // `sql` is null for the indexes of constraints (the primary key), which cannot be dropped.
  const { rows: indexes } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
    where type = 'index' and tbl_name = 'submissions' and sql is not null order by name`.execute(trx)
  for (const index of indexes) await sql`drop index ${sql.id(index.name)}`.execute(trx)
  const result = await write()
  // The definitions are the schema's own, read back from the database, not input.
  for (const index of indexes) await sql.raw(index.sql).execute(trx)
  return result
}
