import type { Selectable } from 'kysely'
import type { Executor } from '../executor.js'
import type { AdminSessionsTable } from '../tables.js'

/**
 * The admin_sessions table's SQL, for the session and user services: they keep the rules
 * (timeouts, who may sign in) and the transactions, and hand their transaction in. `id` is the
 * stored id, a hash of the cookie's token.
 */

/** Session `id` with its user, if both exist. */
export function findSessionWithUser(db: Executor, id: string) {
  return db
    .selectFrom('admin_sessions')
    .innerJoin('users', 'users.id', 'admin_sessions.user_id')
    .select([
      'admin_sessions.csrf_token',
      'admin_sessions.flash',
      'admin_sessions.created_at',
      'admin_sessions.last_seen_at',
      'users.id as user_id',
      'users.email',
      'users.role',
      'users.is_disabled',
    ])
    .where('admin_sessions.id', '=', id)
    .executeTakeFirst()
}

export async function insertSession(trx: Executor, row: Selectable<AdminSessionsTable>): Promise<void> {
  await trx.insertInto('admin_sessions').values(row).execute()
}

export async function deleteSession(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('admin_sessions').where('id', '=', id).execute()
}

/** Ends every session of user `userId`; returns how many there were. */
export async function deleteSessionsOfUser(trx: Executor, userId: string): Promise<number> {
  const ended = await trx.deleteFrom('admin_sessions').where('user_id', '=', userId).executeTakeFirst()
  return Number(ended.numDeletedRows)
}

/** Deletes the sessions last seen at or before `idleSince` or created at or before `createdSince`. */
export async function deleteExpiredSessions(
  trx: Executor,
  idleSince: string,
  createdSince: string,
): Promise<void> {
  await trx
    .deleteFrom('admin_sessions')
    .where((eb) => eb.or([eb('last_seen_at', '<=', idleSince), eb('created_at', '<=', createdSince)]))
    .execute()
}

/**
 * Clears session `id`'s flash if it still is `flash` (and sets `lastSeenAt` when given): true
 * when this call took it, so that of two pages asked at once only one shows it.
 */
export async function takeSessionFlash(
  db: Executor,
  id: string,
  flash: string,
  lastSeenAt: string | undefined,
): Promise<boolean> {
  const taken = await db
    .updateTable('admin_sessions')
    .set({ flash: null, ...(lastSeenAt !== undefined ? { last_seen_at: lastSeenAt } : {}) })
    .where('id', '=', id)
    .where('flash', '=', flash)
    .executeTakeFirst()
  return taken.numUpdatedRows > 0n
}

export async function touchSession(db: Executor, id: string, lastSeenAt: string): Promise<void> {
  await db.updateTable('admin_sessions').set({ last_seen_at: lastSeenAt }).where('id', '=', id).execute()
}

/** Stores session `id`'s flash (JSON text). */
export async function setSessionFlash(db: Executor, id: string, flash: string): Promise<void> {
  await db.updateTable('admin_sessions').set({ flash }).where('id', '=', id).execute()
}
