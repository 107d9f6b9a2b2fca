import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * The statements a migration ran when it was released, for each dialect. A released migration never
 * changes (a checksum test holds them), and it imports nothing from live code: changing a helper
 * today must not change what an old migration does to a database that has not run it yet.
 */
export interface FrozenStatements {
  sqlite: readonly string[]
  postgres: readonly string[]
}

/** Runs a migration's frozen statements for the dialect `db` speaks, in order. */
export async function runFrozen(db: Kysely<unknown>, statements: FrozenStatements): Promise<void> {
  const dialect = db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
  // Constant text written into this file at release, never built from input.
  for (const statement of statements[dialect]) await sql.raw(statement).execute(db)
}
