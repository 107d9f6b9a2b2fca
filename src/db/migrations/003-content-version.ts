import type { Kysely } from 'kysely'
import { createContentVersionTriggers, dropContentVersionTriggers } from '../client.js'
import { CONTENT_TABLES } from '../tables.js'

/**
 * A single-row counter that every write to content moves forward, maintained by triggers so that no
 * write path (import, dashboard, CLI, or an operator's own SQL) can forget it. Readers compare it
 * with the version their cached responses were built at: equal means the cache is exact.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('content_version')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute()
  await db
    .insertInto('content_version' as never)
    .values({ id: 1, version: 1 } as never)
    .execute()
  await createContentVersionTriggers(db, CONTENT_TABLES)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropContentVersionTriggers(db, CONTENT_TABLES)
  await db.schema.dropTable('content_version').execute()
}
