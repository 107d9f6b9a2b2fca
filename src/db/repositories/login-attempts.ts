import type { Selectable } from 'kysely'
import type { Executor } from '../executor.js'
import type { LoginAttemptsTable } from '../tables.js'

/**
 * The login_attempts table's SQL, for the sign-in throttle (`services/sessions/`): the rows left
 * are failures, counted over a sliding window that starts after `since`.
 */

/** Forgets the attempts made at or before `at` (out of every window). */
export async function deleteAttemptsUpTo(db: Executor, at: string): Promise<void> {
  await db.deleteFrom('login_attempts').where('attempted_at', '<=', at).execute()
}

export async function insertAttempt(db: Executor, row: Selectable<LoginAttemptsTable>): Promise<void> {
  await db.insertInto('login_attempts').values(row).execute()
}

export async function deleteAttempt(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('login_attempts').where('id', '=', id).execute()
}

/** How many attempts on `email`, from any address, were made after `since`. */
export async function countAttemptsOnEmail(db: Executor, email: string, since: string): Promise<number> {
  const counted = await db
    .selectFrom('login_attempts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('email', '=', email)
    .where('attempted_at', '>', since)
    .executeTakeFirstOrThrow()
  return Number(counted.n)
}

/**
 * The times of the newest `limit` attempts after `since` that match `email` and `ip` (each when
 * given), newest first.
 */
export async function newestAttemptTimes(
  db: Executor,
  match: { email?: string; ip?: string },
  since: string,
  limit: number,
): Promise<string[]> {
  let query = db
    .selectFrom('login_attempts')
    .select('attempted_at')
    .where('attempted_at', '>', since)
    .orderBy('attempted_at', 'desc')
    .limit(limit)
  if (match.email !== undefined) query = query.where('email', '=', match.email)
  if (match.ip !== undefined) query = query.where('ip_address', '=', match.ip)
  return (await query.execute()).map((row) => row.attempted_at)
}

/** Forgets the attempts on `email` from `ip`. */
export async function deleteAttemptsOnEmailFrom(trx: Executor, email: string, ip: string): Promise<void> {
  await trx.deleteFrom('login_attempts').where('email', '=', email).where('ip_address', '=', ip).execute()
}

/** Forgets every attempt on `email`; returns how many there were. */
export async function deleteAttemptsOnEmail(db: Executor, email: string): Promise<number> {
  const result = await db.deleteFrom('login_attempts').where('email', '=', email).executeTakeFirst()
  return Number(result.numDeletedRows)
}
