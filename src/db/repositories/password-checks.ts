import type { Selectable } from 'kysely'
import type { Executor } from '../executor.js'
import type { PasswordChecksTable } from '../tables.js'

/**
 * The password_checks table's SQL, for the current-password throttle (`services/sessions/`): the
 * rows left are wrong answers, counted over a sliding window that starts after `since`.
 */

/** Forgets the checks made at or before `at` (out of every window). */
export async function deleteChecksUpTo(db: Executor, at: string): Promise<void> {
  await db.deleteFrom('password_checks').where('checked_at', '<=', at).execute()
}

export async function insertCheck(db: Executor, row: Selectable<PasswordChecksTable>): Promise<void> {
  await db.insertInto('password_checks').values(row).execute()
}

export async function deleteCheck(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('password_checks').where('id', '=', id).execute()
}

/** How many checks of one session or one user (`column` = `value`) were made after `since`. */
export async function countChecks(
  db: Executor,
  column: 'session_id' | 'user_id',
  value: string,
  since: string,
): Promise<number> {
  const counted = await db
    .selectFrom('password_checks')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where(column, '=', value)
    .where('checked_at', '>', since)
    .executeTakeFirstOrThrow()
  return Number(counted.n)
}

/** Forgets the checks session `sessionId` made. */
export async function deleteChecksOfSession(db: Executor, sessionId: string): Promise<void> {
  await db.deleteFrom('password_checks').where('session_id', '=', sessionId).execute()
}
