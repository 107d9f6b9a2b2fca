import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import type SQLite from 'better-sqlite3'
import {
  type Compilable,
  type Expression,
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  sql,
} from 'kysely'
import type pg from 'pg'
import { UnavailableError, ValidationError } from '../errors.js'
import { migrationProvider } from './migrations/index.js'
import type { Database } from './tables.js'

export type DialectName = 'sqlite' | 'postgres'

// Each driver is loaded only when its dialect is used: an instance on one database does not pay the
// memory of the other's driver.
const require = createRequire(import.meta.url)

export type PreparedQuery<Row> = (values?: Record<string, unknown>) => Promise<Row[]>

const PLACEHOLDER = Symbol('lectern.placeholder')
interface Placeholder {
  [PLACEHOLDER]: string
}

/**
 * A named placeholder for a prepared query: build the query with `param('formId')` where a value
 * goes, and pass `{ formId: … }` on each run. Typed as `T` so builders accept it.
 */
export function param<T = string>(name: string): T {
  return { [PLACEHOLDER]: name } as unknown as T
}

/** Maps a compiled query's parameters to this run's values, in the compiled order. */
function bindValues(parameters: readonly unknown[], values: Record<string, unknown>): unknown[] {
  return parameters.map((p) => {
    if (typeof p !== 'object' || p === null || !(PLACEHOLDER in p)) return p
    const name = (p as Placeholder)[PLACEHOLDER]
    if (!(name in values)) throw new Error(`No value for query placeholder '${name}'`)
    return values[name]
  })
}

/** An open database: the Kysely instance plus the few facts about its dialect that callers need. */
export interface DatabaseHandle {
  db: Kysely<Database>
  dialect: DialectName
  /** Where the data lives, without credentials; safe to print. */
  description: string
  /** Connections in use and waiting, for metrics. SQLite has a single in-process connection. */
  poolStats(): { total: number; idle: number; waiting: number }
  /**
   * Prepares a query once — SQLite keeps the statement, PostgreSQL names it so each connection
   * parses it once — and returns a function that runs it with new values for its placeholders.
   * The SQL comes from a Kysely builder (see `param`), never from strings.
   */
  prepare<Row>(query: Compilable<Row>): PreparedQuery<Row>
  /** Resolves when the database answers a trivial query; rejects with `UnavailableError` otherwise. */
  ping(): Promise<void>
  close(): Promise<void>
}

/**
 * Opens the database named by `DATABASE_URL`. This is the only file that knows which dialects
 * exist; everything dialect-specific (pragmas, pool settings, driver error codes) lives here.
 */
export function openDatabase(url: string): DatabaseHandle {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length))
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url)
  throw new ValidationError(`Unsupported DATABASE_URL '${redactUrl(url)}': use sqlite:<file> or postgres://…`)
}

function openSqlite(file: string): DatabaseHandle {
  if (file === '')
    throw new ValidationError('DATABASE_URL sqlite: needs a file name, e.g. sqlite:./data/lectern.db')
  const path = file === ':memory:' ? file : resolve(file)
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const Driver = require('better-sqlite3') as typeof SQLite
  const sqlite = new Driver(path)
  // WAL lets the CLI write while a server reads; busy_timeout makes writers queue instead of failing.
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('synchronous = NORMAL')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
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
          throw translateDatabaseError(error)
        }
      }
    },
    ping: () => ping(db),
    close: () => db.destroy(),
  }
}

function openPostgres(url: string): DatabaseHandle {
  const { Pool } = require('pg') as typeof pg
  const pool = new Pool({
    connectionString: url,
    max: 10,
    // Short connect and query timeouts turn an unreachable database into a quick 503 instead of a
    // request that hangs until the client gives up.
    connectionTimeoutMillis: 2000,
    query_timeout: 3000,
    statement_timeout: 3000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
  })
  // A client losing its connection must not crash the process, whether idle in the pool or checked
  // out between queries: its query fails (and becomes a 503) and the pool replaces the client.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return {
    db,
    dialect: 'postgres',
    description: redactUrl(url),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    prepare<Row>(query: Compilable<Row>): PreparedQuery<Row> {
      const compiled = query.compile()
      const name = `lectern_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 16)}`
      return async (values = {}) => {
        try {
          const result = await pool.query({
            name,
            text: compiled.sql,
            values: bindValues(compiled.parameters, values),
          })
          return result.rows as Row[]
        } catch (error) {
          throw translateDatabaseError(error)
        }
      }
    },
    ping: () => ping(db),
    close: () => db.destroy(),
  }
}

async function ping(db: Kysely<Database>): Promise<void> {
  try {
    await sql`select 1`.execute(db)
  } catch (error) {
    const translated = translateDatabaseError(error)
    throw translated instanceof UnavailableError
      ? translated
      : new UnavailableError('Database unavailable', { cause: error })
  }
}

/** Runs a query, translating driver failures (connection loss) into the project's error types. */
export async function guarded<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query()
  } catch (error) {
    throw translateDatabaseError(error)
  }
}

/** Which dialect a Kysely instance speaks; for the few places (migrations) that must differ. */
export function dialectOf(db: Kysely<unknown>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
}

/**
 * The column type for text that is sorted or compared as a key (ids, timestamps, paths): byte order
 * on both dialects. PostgreSQL would otherwise sort by the database's locale, so `ORDER BY id`
 * would differ between SQLite and PostgreSQL for the same data.
 */
export function keyTextType(db: Kysely<unknown>): Expression<unknown> {
  return dialectOf(db) === 'postgres' ? sql`text collate "C"` : sql`text collate binary`
}

/**
 * Triggers that move `content_version` on every insert, update or delete of `tables`. PostgreSQL
 * fires once per statement; SQLite has only row triggers, which cost a single-row update each.
 */
export async function createContentVersionTriggers(
  db: Kysely<unknown>,
  tables: readonly string[],
): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`create function bump_content_version() returns trigger language plpgsql as $$
      begin update content_version set version = version + 1 where id = 1; return null; end $$`.execute(db)
    for (const table of tables) {
      await sql`create trigger ${sql.id(`${table}_content_version`)}
        after insert or update or delete or truncate on ${sql.table(table)}
        for each statement execute function bump_content_version()`.execute(db)
    }
    return
  }
  for (const table of tables) {
    for (const operation of ['insert', 'update', 'delete'] as const) {
      await sql`create trigger ${sql.id(`${table}_${operation}_content_version`)}
        after ${sql.raw(operation)} on ${sql.table(table)}
        begin update content_version set version = version + 1 where id = 1; end`.execute(db)
    }
  }
}

/**
 * Runs a bulk write (an import) inside `trx` without SQLite's per-row version triggers, moving the
 * content version once at the end instead: a million-row import would otherwise pay a million
 * extra updates. SQLite DDL is transactional and only one writer holds the database, so no other
 * write can happen while the triggers are lifted, and a rollback restores them. PostgreSQL's
 * triggers already fire once per statement and stay as they are.
 */
export async function withBulkContentWrites<DB, T>(
  transaction: Kysely<DB>,
  tables: readonly string[],
  write: () => Promise<T>,
): Promise<T> {
  const trx = transaction as unknown as Kysely<unknown>
  if (dialectOf(trx) === 'postgres') return write()
  await dropContentVersionTriggers(trx, tables)
  const result = await write()
  await sql`update content_version set version = version + 1 where id = 1`.execute(trx)
  await createContentVersionTriggers(trx, tables)
  return result
}

/** The index behind every submissions list: one form's rows in (created_at, id) order. */
export async function createSubmissionsOrderIndex(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('submissions_form_order')
    .on('submissions')
    .columns(['form_id', 'created_at', 'id'])
    .execute()
}

/**
 * Loads many submissions inside `trx` with the order index dropped and rebuilt once at the end, on
 * SQLite: one sort is much cheaper than keeping the index up to date row by row in random order.
 * Transactional like the trigger lifting above; PostgreSQL keeps its index as it is.
 */
export async function withSubmissionsIndexRebuilt<DB, T>(
  transaction: Kysely<DB>,
  write: () => Promise<T>,
): Promise<T> {
  const trx = transaction as unknown as Kysely<unknown>
  if (dialectOf(trx) === 'postgres') return write()
  await trx.schema.dropIndex('submissions_form_order').execute()
  const result = await write()
  await createSubmissionsOrderIndex(trx)
  return result
}

export async function dropContentVersionTriggers(
  db: Kysely<unknown>,
  tables: readonly string[],
): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    for (const table of tables) {
      await sql`drop trigger if exists ${sql.id(`${table}_content_version`)} on ${sql.table(table)}`.execute(
        db,
      )
    }
    await sql`drop function if exists bump_content_version()`.execute(db)
    return
  }
  for (const table of tables) {
    for (const operation of ['insert', 'update', 'delete']) {
      await sql`drop trigger if exists ${sql.id(`${table}_${operation}_content_version`)}`.execute(db)
    }
  }
}

/** Brings the schema up to date. Safe to call on every start and from several processes. */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema it can see; pinning them to the current
  // schema keeps two Lectern databases in separate schemas of one PostgreSQL database apart.
  const migrationTableSchema =
    handle.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db)).rows[0]?.schema
      : undefined
  // Migrations are independent of one another, so one written on a parallel branch may land after a
  // later-numbered one has been applied.
  const migrator = new Migrator({
    db: handle.db,
    provider: migrationProvider,
    migrationTableSchema,
    allowUnorderedMigrations: true,
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw translateDatabaseError(error)
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** True when a write failed because a unique or primary-key constraint already holds the value. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505'
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  '57P01', // admin_shutdown
  '57014', // query_canceled: statement_timeout hit while the database is locked or overloaded
  '57P03', // cannot_connect_now
  '08000',
  '08003',
  '08006',
])

/**
 * Maps driver errors to the project's error types at the repository boundary: connection loss
 * becomes `UnavailableError` (503); anything else stays as is and is reported as a 500.
 */
export function translateDatabaseError(error: unknown): unknown {
  if (error instanceof UnavailableError) return error
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  if (
    (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i.test(
      message,
    )
  ) {
    return new UnavailableError('Database unavailable', { cause: error })
  }
  return error
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@')
}
