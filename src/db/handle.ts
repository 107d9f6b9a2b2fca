import type { Compilable, Kysely, RawBuilder } from 'kysely'
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
