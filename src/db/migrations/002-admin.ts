import { type Kysely, sql } from 'kysely'
import { keyTextType } from '../client.js'

/** The rows of `locks`; see `src/db/locks.ts`. */
export const LOCK_NAMES = ['setup', 'redirects'] as const

/**
 * What the admin dashboard needs: server-side sessions, the failed sign-ins that throttle logins
 * (kept in the database so every instance counts the same attempts), and the rows writers lock to
 * serialize changes that must see each other (the first admin, redirect loop checks).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const key = keyTextType(db)
  await db.schema
    .createTable('admin_sessions')
    // SHA-256 of the cookie's token: reading the table does not yield a usable session.
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('user_id', key, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('flash', 'text')
    .addColumn('created_at', key, (c) => c.notNull())
    .addColumn('last_seen_at', key, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('admin_sessions_user').on('admin_sessions').column('user_id').execute()
  await db.schema
    .createIndex('admin_sessions_last_seen')
    .on('admin_sessions')
    .column('last_seen_at')
    .execute()

  await db.schema
    .createTable('login_attempts')
    .addColumn('id', key, (c) => c.primaryKey())
    .addColumn('email', key, (c) => c.notNull())
    .addColumn('ip_address', key, (c) => c.notNull())
    .addColumn('attempted_at', key, (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('login_attempts_email')
    .on('login_attempts')
    .columns(['email', 'attempted_at'])
    .execute()
  await db.schema
    .createIndex('login_attempts_ip')
    .on('login_attempts')
    .columns(['ip_address', 'attempted_at'])
    .execute()
  await db.schema.createIndex('login_attempts_time').on('login_attempts').column('attempted_at').execute()

  await db.schema
    .createTable('locks')
    .addColumn('name', key, (c) => c.primaryKey())
    .addColumn('acquired_at', 'text')
    .execute()
  for (const name of LOCK_NAMES) await sql`insert into locks (name) values (${name})`.execute(db)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['locks', 'login_attempts', 'admin_sessions']) {
    await db.schema.dropTable(table).execute()
  }
}
