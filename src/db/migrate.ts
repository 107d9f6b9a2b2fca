import { Migrator, sql } from 'kysely'
import type { DatabaseHandle } from './database.js'
import { migrationProvider } from './migrations/index.js'

/**
 * The migrator of `handle`'s database, with the project's migrations. Kysely looks for its
 * bookkeeping tables in every schema it can see; pinning them to the current schema keeps two
 * Lectern databases in separate schemas of one PostgreSQL database apart.
 */
export async function createMigrator(handle: DatabaseHandle): Promise<Migrator> {
  const migrationTableSchema =
    handle.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db)).rows[0]?.schema
      : undefined
  return new Migrator({ db: handle.db, provider: migrationProvider, migrationTableSchema })
}

/** Brings the schema up to date, in order. Safe to call on every start and from several processes. */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  const { error, results } = await (await createMigrator(handle)).migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
