import { deleteExpiredSessions, deleteSession, insertSession } from '../../db/repositories/admin-sessions.js'
import {
  deleteAttempt,
  deleteAttemptsOnEmail,
  deleteAttemptsOnEmailFrom,
} from '../../db/repositories/login-attempts.js'
import { findUserByEmail, holdUnchangedUser } from '../../db/repositories/users.js'
import { randomBase62 } from '../../ids.js'
import { recordAudit } from '../audit.js'
import { hashPassword, PASSWORD_HASHING, PasswordHashingBusyError, verifyPassword } from '../passwords.js'
import { isRole } from '../roles.js'
import type { AdminSession } from './authenticate.js'
import { type SessionContext, slowDown } from './settings.js'
import { attemptEmail, forgetAttempt, recordAttempt } from './throttle.js'
import { hashToken, newToken } from './tokens.js'

export type SignInResult =
  | { status: 'signed_in'; token: string; session: AdminSession }
  /** Unknown email or wrong password: the two are not told apart. */
  | { status: 'invalid' }
  /** The right password for a disabled user. */
  | { status: 'disabled' }
  /**
   * Too many recent failures from this address (for this email, or for any); the password was not
   * checked. Other addresses are not affected.
   */
  | { status: 'locked'; retryAfterSeconds: number }
  /** Too many sign-ins are waiting for a password check on this instance; nothing was checked. */
  | { status: 'busy'; retryAfterSeconds: number }

/** What a sign-in gives: an email, a password, the address it came from and the session it replaces. */
export interface SignInInput {
  email: string
  password: string
  ip: string
  previousToken?: string
}

/**
 * Signing in, for one session service. Unknown emails are checked against a decoy hash made once,
 * so that a response's timing does not tell them apart.
 */
export function createSignIn(context: SessionContext) {
  const { db, settings, clock, stamp } = context
  let decoy: Promise<string> | undefined

  /**
   * Checks an email and password and opens a session, under the throttle (OWASP's authentication
   * cheat sheet): an address that failed too often for this email, or for any, is refused without a
   * check; an email that failed too often from anywhere is slowed, never locked, so an attacker can
   * neither guess from one address nor keep the owner out from another. The attempt is recorded
   * before the password is checked and counted together with the earlier ones, so that concurrent
   * guesses cannot all slip under a limit; an attempt refused by a lock is not counted (a lock lifts
   * on time however hard it is hammered); a success removes the failures of its address for the
   * email. `previousToken`, the session the browser held before, is ended: the session id always
   * changes at sign-in.
   */
  return async function signIn(input: SignInInput): Promise<SignInResult> {
    const email = attemptEmail(input.email)
    const current = clock()
    const windowStart = stamp(current - settings.throttleWindowMs)
    const attemptId = randomBase62(24)
    const { pair, address, accountFailures } = await recordAttempt(context, {
      id: attemptId,
      email,
      ip: input.ip,
      current,
      windowStart,
    })
    if (pair > 0 || address > 0) {
      await forgetAttempt(context, attemptId)
      return { status: 'locked', retryAfterSeconds: Math.max(pair, address) }
    }
    await slowDown(context, accountFailures)

    const user = await findUserByEmail(db, email)
    let matches: boolean
    try {
      // Sign-ins wait behind a few others at most; beyond that the instance is too busy to check more.
      // They wait in their own line, which checks of signed-in users cannot fill.
      const busy = { line: 'sign-in', maxQueue: PASSWORD_HASHING.maxQueue } as const
      decoy ??= hashPassword(newToken())
      matches = await verifyPassword(input.password, user?.password_hash ?? (await decoy), busy)
    } catch (error) {
      if (!(error instanceof PasswordHashingBusyError)) throw error
      await forgetAttempt(context, attemptId)
      return { status: 'busy', retryAfterSeconds: error.retryAfterSeconds }
    }
    if (!user || !matches || !isRole(user.role) || user.is_disabled === 1) {
      // The email as typed, never the password.
      await recordAudit(db, {
        actor: { email },
        action: 'session.sign_in_failed',
        target: email,
        detail: { ip: input.ip, reason: user && matches && isRole(user.role) ? 'disabled' : 'invalid' },
      })
      return { status: user && matches && isRole(user.role) ? 'disabled' : 'invalid' }
    }

    const token = newToken()
    const csrfToken = newToken()
    const opened = await db.transaction().execute(async (trx) => {
      // The session is written only if the password checked is still the user's, and the user is
      // still enabled: a reset or a disable committed while the hash ran has already ended the
      // user's sessions and must not miss this one. As the first statement it takes the user's row
      // (waiting for such a change to commit), so a change that comes later ends this session too.
      if (!(await holdUnchangedUser(trx, user.id, user.password_hash))) return false
      // The owner's own typos from this address are forgiven; failures from elsewhere still count.
      await deleteAttemptsOnEmailFrom(trx, email, input.ip)
      await deleteAttempt(trx, attemptId)
      if (input.previousToken !== undefined) await deleteSession(trx, hashToken(input.previousToken))
      // Expired sessions are otherwise deleted only when presented; sign-ins keep the table small.
      await deleteExpiredSessions(
        trx,
        stamp(current - settings.idleTimeoutMs),
        stamp(current - settings.absoluteTimeoutMs),
      )
      await insertSession(trx, {
        id: hashToken(token),
        user_id: user.id,
        csrf_token: csrfToken,
        flash: null,
        created_at: stamp(current),
        last_seen_at: stamp(current),
      })
      await recordAudit(trx, {
        actor: { email: user.email },
        action: 'session.signed_in',
        target: user.email,
        detail: { ip: input.ip },
      })
      return true
    })
    if (!opened) {
      await recordAudit(db, {
        actor: { email },
        action: 'session.sign_in_failed',
        target: email,
        detail: { ip: input.ip, reason: 'changed_meanwhile' },
      })
      return { status: 'invalid' }
    }
    return {
      status: 'signed_in',
      token,
      session: {
        id: hashToken(token),
        csrfToken,
        user: { id: user.id, email: user.email, role: user.role },
        flash: null,
      },
    }
  }
}

/**
 * Clears the sign-in throttle of an email (`lectern users unlock`): its recorded failures from every
 * address, so locks on it lift and its slowdown ends at once. Returns how many were cleared.
 */
export function clearSignInFailures(context: SessionContext, email: string): Promise<number> {
  return deleteAttemptsOnEmail(context.db, attemptEmail(email))
}
