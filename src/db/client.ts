import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import SQLite from 'better-sqlite3'
import {
  type Expression,
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  SqliteDialect,
  sql,
} from 'kysely'
import pg from 'pg'
import { UnavailableError, ValidationError } from '../errors.js'
import { migrationProvider } from './migrations/index.js'
import type { Database } from './tables.js'

export type DialectName = 'sqlite' | 'postgres'

/** An open database: the Kysely instance plus the few facts about its dialect that callers need. */
export interface DatabaseHandle {
  db: Kysely<Database>
  dialect: DialectName
  /** Where the data lives, without credentials; safe to print. */
  description: string
  /** Connections in use and waiting, for metrics. SQLite has a single in-process connection. */
  poolStats(): { total: number; idle: number; waiting: number }
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
  const sqlite = new SQLite(path)
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
    ping: () => ping(db),
    close: () => db.destroy(),
  }
}

function openPostgres(url: string): DatabaseHandle {
  const pool = new pg.Pool({
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

/** Brings the schema up to date. Safe to call on every start and from several processes. */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema it can see; pinning them to the current
  // schema keeps two Lectern databases in separate schemas of one PostgreSQL database apart.
  const migrationTableSchema =
    handle.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db)).rows[0]?.schema
      : undefined
  const migrator = new Migrator({ db: handle.db, provider: migrationProvider, migrationTableSchema })
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
