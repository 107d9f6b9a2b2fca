import { type Kysely, PostgresAdapter } from 'kysely'
import { UnavailableError, ValidationError } from '../errors.js'
import { openPostgres } from './dialects/postgres.js'
import { openSqlite } from './dialects/sqlite.js'
import type { DatabaseHandle, DialectName } from './handle.js'

export type { DatabaseHandle, DialectName, JsonSql } from './handle.js'

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
  /**
   * SQLite: checkpoint the WAL from a worker thread rather than inside commits (see
   * `dialects/sqlite-checkpoints.ts`), for a process whose event loop serves requests.
   */
  backgroundCheckpoints?: boolean
}

/**
 * Opens the database named by `DATABASE_URL`: `sqlite:<file>` or `postgres://…`. Everything that
 * differs between the two lives in `dialects/`.
 */
export function openDatabase(url: string, options: OpenOptions = {}): DatabaseHandle {
  const statementTimeoutMs = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS
  const handle = url.startsWith('sqlite:')
    ? openSqlite(url.slice('sqlite:'.length), {
        create: options.create ?? true,
        backgroundCheckpoints: options.backgroundCheckpoints ?? false,
      })
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
