import { deleteSession } from '../../db/repositories/admin-sessions.js'
import {
  countChecks,
  deleteCheck,
  deleteChecksOfSession,
  deleteChecksUpTo,
  insertCheck,
} from '../../db/repositories/password-checks.js'
import { findPasswordHash } from '../../db/repositories/users.js'
import { randomBase62 } from '../../ids.js'
import { recordAudit } from '../audit.js'
import { PASSWORD_HASHING, PasswordHashingBusyError, verifyPassword } from '../passwords.js'
import type { AdminSession } from './authenticate.js'
import { type SessionContext, slowDown } from './settings.js'

export type PasswordCheckResult =
  | { status: 'right' }
  | { status: 'wrong' }
  /** Too many wrong current passwords from this session: it is ended; nothing was checked. */
  | { status: 'signed_out' }
  /** This user's check is already running, or too many checks wait on this instance; nothing was checked. */
  | { status: 'busy'; retryAfterSeconds: number }

/**
 * Checks a signed-in user's current password (before their password changes), under a throttle
 * like sign-in's with the session in the place of the address: a session with too many recent
 * wrong answers is ended without a check, and every check of a user with too many wrong answers
 * from anywhere is slowed, never refused, so that a stolen session can neither guess nor keep the
 * owner from changing the password from a new one. Failures count only here, never against signing
 * in. The check waits in the hashing queue's `account` line, one at a time per user.
 */
export async function checkCurrentPassword(
  context: SessionContext,
  session: AdminSession,
  password: string,
  ip: string,
): Promise<PasswordCheckResult> {
  const { db, settings, clock, stamp } = context
  const current = clock()
  const windowStart = stamp(current - settings.throttleWindowMs)
  const checkId = randomBase62(24)
  const userId = session.user.id
  // Recorded before the check and counted with the others, so concurrent guesses cannot all slip under the limit.
  await deleteChecksUpTo(db, windowStart)
  await insertCheck(db, { id: checkId, user_id: userId, session_id: session.id, checked_at: stamp(current) })
  // Every failure but this check.
  const failures = async (column: 'session_id' | 'user_id', value: string) =>
    (await countChecks(db, column, value, windowStart)) - 1
  if ((await failures('session_id', session.id)) >= settings.maxPasswordCheckFailuresPerSession) {
    await db.transaction().execute(async (trx) => {
      await deleteCheck(trx, checkId)
      await deleteSession(trx, session.id)
      await recordAudit(trx, {
        actor: { email: session.user.email },
        action: 'session.ended',
        target: session.user.email,
        detail: { ip, reason: 'too_many_wrong_passwords' },
      })
    })
    return { status: 'signed_out' }
  }
  await slowDown(context, await failures('user_id', userId))

  const passwordHash = await findPasswordHash(db, userId)
  let matches: boolean
  try {
    matches =
      passwordHash !== undefined &&
      (await verifyPassword(password, passwordHash, {
        line: 'account',
        maxQueue: PASSWORD_HASHING.maxQueue,
        owner: userId,
        maxPerOwner: PASSWORD_HASHING.maxChecksPerUser,
      }))
  } catch (error) {
    if (!(error instanceof PasswordHashingBusyError)) throw error
    await deleteCheck(db, checkId)
    return { status: 'busy', retryAfterSeconds: error.retryAfterSeconds }
  }
  if (matches) {
    // This session's own typos are forgiven; failures from other sessions still count.
    await deleteChecksOfSession(db, session.id)
    return { status: 'right' }
  }
  await recordAudit(db, {
    actor: { email: session.user.email },
    action: 'session.password_check_failed',
    target: session.user.email,
    detail: { ip },
  })
  return { status: 'wrong' }
}
