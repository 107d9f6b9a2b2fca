import type { Kysely } from 'kysely'
import { createSubmissionsOrderIndex, keyTextType } from '../client.js'

/**
 * The first schema. Only portable column types (text, integer) so the same migration runs on
 * SQLite and PostgreSQL; every list query has an index matching its filter and order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = keyTextType(db)
  await db.schema
    .createTable('users')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('email', key, (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('is_disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', key, (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', key, (c) => c.notNull().unique())
    .addColumn('created_by', key, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', key, (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute()

  await db.schema
    .createTable('forms')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', key, (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('forms_order').on('forms').columns(['created_at', 'id']).execute()
  await db.schema
    .createIndex('forms_active_order')
    .on('forms')
    .columns(['is_active', 'created_at', 'id'])
    .execute()

  await db.schema
    .createTable('submissions')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('form_id', key, (c) => c.notNull().references('forms.id').onDelete('cascade'))
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('referrer', 'text')
    .addColumn('submitted_by', 'text')
    .addColumn('is_read', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_starred', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('notes', 'text')
    .addColumn('created_at', key, (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await createSubmissionsOrderIndex(db)

  await db.schema
    .createTable('pages')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('path', key, (c) => c.notNull().unique())
    .addColumn('page_type', 'text', (c) => c.notNull())
    .addColumn('is_published', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('published_at', 'text')
    .addColumn('created_at', key, (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('pages_order').on('pages').columns(['created_at', 'id']).execute()
  await db.schema
    .createIndex('pages_published_order')
    .on('pages')
    .columns(['is_published', 'created_at', 'id'])
    .execute()

  await db.schema
    .createTable('redirects')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('from_path', key, (c) => c.notNull().unique())
    .addColumn('to_path', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', key, (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('redirects_order').on('redirects').columns(['created_at', 'id']).execute()
  await db.schema
    .createIndex('redirects_active_order')
    .on('redirects')
    .columns(['is_active', 'created_at', 'id'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['redirects', 'pages', 'submissions', 'forms', 'api_keys', 'users']) {
    await db.schema.dropTable(table).execute()
  }
}
