import { type Compilable, type Kysely, PostgresAdapter, type RawBuilder } from 'kysely'
import { UnavailableError, ValidationError } from '../errors.js'
import { openPostgres } from './dialects/postgres.js'
import { openSqlite } from './dialects/sqlite.js'
import type { PreparedQuery } from './prepared.js'
import type { Database } from './tables.js'

export type DialectName = 'sqlite' | 'postgres'

/**
 * An open database: the Kysely instance plus the few facts about its dialect that callers need.
 * Every query run through it has its driver errors translated (see `errors.ts`): a lost database
 * surfaces as `UnavailableError`, a taken unique value as `UniqueViolationError`.
 */
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
  /** SQL for JSON text in the database, which each dialect spells its own way. */
  json: JsonSql
  /** Resolves when the database answers a trivial query; rejects with `UnavailableError` otherwise. */
  ping(): Promise<void>
  close(): Promise<void>
}

/**
 * JSON text put together by the database, so that a page reaches JavaScript as one value rather
 * than as one value per row and column (see `repositories/content.ts`).
 */
export interface JsonSql {
  /**
   * An aggregate: the texts of `column` over the rows, joined by commas in the order the rows come
   * (the items of a JSON array, without its brackets), or NULL for no rows. A dialect without it
   * returns a page's items one row each, joined in JavaScript.
   */
  joined?(column: string): RawBuilder<string | null>
}

/** How long one statement may run before it fails as unavailable (PostgreSQL), unless told otherwise. */
export const STATEMENT_TIMEOUT_MS = 3_000

/**
 * How long one statement may run in a process that only loads data (`lectern import`): its bulk
 * statements (the sorted move of a million submissions, `VACUUM`) run for seconds by design, and
 * no request waits on them.
 */
export const BULK_STATEMENT_TIMEOUT_MS = 30 * 60_000

export interface OpenOptions {
  /** See {@link STATEMENT_TIMEOUT_MS} and {@link BULK_STATEMENT_TIMEOUT_MS}. */
  statementTimeoutMs?: number
  /**
   * Whether a SQLite file (and its directory) that does not exist is created (the default); when
   * false, opening it fails with a `ValidationError` naming the file, so a mistyped path is not
   * taken for an empty database.
   */
  create?: boolean
}

/**
 * Opens the database named by `DATABASE_URL`: `sqlite:<file>` or `postgres://…`. Everything that
 * differs between the two lives in `dialects/`.
 */
export function openDatabase(url: string, options: OpenOptions = {}): DatabaseHandle {
  const statementTimeoutMs = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS
  const handle = url.startsWith('sqlite:')
    ? openSqlite(url.slice('sqlite:'.length), { create: options.create ?? true })
    : url.startsWith('postgres://') || url.startsWith('postgresql://')
      ? openPostgres(url, redactUrl(url), statementTimeoutMs)
      : undefined
  if (!handle)
    throw new ValidationError(
      `Unsupported DATABASE_URL '${redactUrl(url)}': use sqlite:<file> or postgres://…`,
    )
  const ping = handle.ping
  return {
    ...handle,
    ping: async () => {
      try {
        await ping()
      } catch (error) {
        throw error instanceof UnavailableError
          ? error
          : new UnavailableError('Database unavailable', { cause: error })
      }
    },
  }
}

/** Which dialect a Kysely instance (or transaction) speaks; for the few places that must differ. */
export function dialectOf(db: Kysely<unknown>): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@')
}
