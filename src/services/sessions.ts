import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../db/tables.js'
import { randomBase62 } from '../ids.js'
import { formatTimestamp } from '../time.js'
import { recordAudit } from './audit.js'
import { hashPassword, PASSWORD_HASHING, PasswordHashingBusyError, verifyPassword } from './passwords.js'
import { isRole, type Role } from './roles.js'

/** How long dashboard sessions live and how sign-ins are throttled; every field has a default. */
export interface SessionOptions {
  /** Milliseconds since the epoch; tests pass a clock they move. */
  clock?: () => number
  /** A session unused for this long ends (default 30 minutes). */
  idleTimeoutMs?: number
  /** A session ends this long after sign-in, however busy (default 12 hours). */
  absoluteTimeoutMs?: number
  /**
   * Failed sign-ins for one email from one address within the window before that address is
   * refused for that email (default 5). Stops one address guessing one password; the owner signing
   * in from elsewhere is not affected.
   */
  maxFailuresPerAddressAndAccount?: number
  /**
   * Failed sign-ins from one address, for any emails, within the window before the address is
   * refused (default 100). Stops one address spraying guesses over many accounts.
   */
  maxFailuresPerAddress?: number
  /**
   * Failed sign-ins for one email, from any address, within the window after which every attempt
   * on it is slowed (default 5). The account is never locked: a right password still signs in.
   */
  accountSlowdownAfter?: number
  /** The first slowdown; it doubles with each further failure (default 1 s). */
  accountDelayMs?: number
  /** The longest slowdown (default 10 s). */
  accountDelayMaxMs?: number
  /** The sliding window failures are counted over (default 15 minutes). */
  throttleWindowMs?: number
  /**
   * Wrong current passwords (asked by the account page) from one session within the window before
   * that session is ended (default 5). A stolen session cannot be used to guess the password, and
   * the owner, who shares a stolen cookie's session, signs in again to a fresh one. Failures of one
   * user from all sessions slow that user's checks as `accountSlowdownAfter` slows sign-ins.
   */
  maxPasswordCheckFailuresPerSession?: number
  /** How a slowdown waits; tests pass one that records the delays. */
  sleep?: (ms: number) => Promise<void>
}

export const SESSION_DEFAULTS = {
  idleTimeoutMs: 30 * 60_000,
  absoluteTimeoutMs: 12 * 60 * 60_000,
  maxFailuresPerAddressAndAccount: 5,
  maxFailuresPerAddress: 100,
  maxPasswordCheckFailuresPerSession: 5,
  accountSlowdownAfter: 5,
  accountDelayMs: 1_000,
  accountDelayMaxMs: 10_000,
  throttleWindowMs: 15 * 60_000,
} satisfies Required<Omit<SessionOptions, 'clock' | 'sleep'>>

/** `last_seen_at` is written at most this often per session, so reading pages does not mean writing. */
const LAST_SEEN_RESOLUTION_MS = 60_000
/** 32 random bytes, base64url: what a session token looks like. Anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/
/** The longest email a sign-in attempt is recorded under; longer input cannot be a user anyway. */
const MAX_EMAIL_LENGTH = 254

export interface Flash {
  kind: 'success' | 'error'
  text: string
}

/** The signed-in user behind a dashboard request, read fresh from the database on every request. */
export interface AdminSession {
  /** The stored id (a hash of the cookie's token), for `setFlash`. */
  id: string
  csrfToken: string
  user: { id: string; email: string; role: Role }
  /** The message left by the previous request, already cleared from the session. */
  flash: Flash | null
}

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

export type PasswordCheckResult =
  | { status: 'right' }
  | { status: 'wrong' }
  /** Too many wrong current passwords from this session: it is ended; nothing was checked. */
  | { status: 'signed_out' }
  /** This user's check is already running, or too many checks wait on this instance; nothing was checked. */
  | { status: 'busy'; retryAfterSeconds: number }

/**
 * The sign-in throttle could not be read or written. Sign-in fails closed: without a working
 * throttle, nobody signs in, so a broken store can never open the door to unlimited guessing.
 */
export class SignInUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('Signing in is temporarily unavailable, please try again in a few minutes', options)
    this.name = 'SignInUnavailableError'
  }
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')

/** Compares a submitted CSRF token with the session's in constant time. */
export function csrfTokenMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected))
}

/** A fresh random token (256 bits, base64url), for session cookies and CSRF tokens. */
export function newToken(): string {
  return randomBytes(32).toString('base64url')
}

/**
 * Dashboard sessions and sign-in throttling, both kept in the database so that every instance sees
 * the same sessions and counts the same failures. A session is looked up with its user on every
 * request, so a role change applies at once and a disabled or deleted user is signed out at once.
 */
export function createSessionService(db: Kysely<Database>, options: SessionOptions = {}) {
  const settings = { ...SESSION_DEFAULTS, ...options }
  const clock = options.clock ?? Date.now
  const stamp = (ms: number) => formatTimestamp(new Date(ms))
  // Unknown emails are checked against this hash, so that a response's timing does not tell them apart.
  let decoy: Promise<string> | undefined

  /** Runs a throttle query; any failure refuses the sign-in. */
  const throttle = async <T>(query: () => Promise<T>): Promise<T> => {
    try {
      return await query()
    } catch (error) {
      throw new SignInUnavailableError({ cause: error })
    }
  }

  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))

  /** Seconds until the oldest of the failures that keep these attempts locked leaves the window. */
  const lockedFor = async (match: { email?: string; ip?: string }, max: number, since: string) => {
    let query = db
      .selectFrom('login_attempts')
      .select('attempted_at')
      .where('attempted_at', '>', since)
      .orderBy('attempted_at', 'desc')
      .limit(max + 1)
    if (match.email !== undefined) query = query.where('email', '=', match.email)
    if (match.ip !== undefined) query = query.where('ip_address', '=', match.ip)
    const rows = await query.execute()
    // The newest row is this attempt; the lock lifts when the oldest of the `max` failures before it
    // leaves the window.
    if (rows.length <= max) return 0
    const oldestThatCounts = Date.parse(rows[max].attempted_at)
    return Math.max(1, Math.ceil((oldestThatCounts + settings.throttleWindowMs - clock()) / 1000))
  }

  const readFlash = (value: string | null): Flash | null => {
    if (value === null) return null
    try {
      const parsed = JSON.parse(value) as Flash
      return parsed.kind === 'error' || parsed.kind === 'success' ? parsed : null
    } catch {
      return null
    }
  }

  return {
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
    async signIn(input: {
      email: string
      password: string
      ip: string
      previousToken?: string
    }): Promise<SignInResult> {
      const email = input.email.trim().toLowerCase().slice(0, MAX_EMAIL_LENGTH)
      const current = clock()
      const windowStart = stamp(current - settings.throttleWindowMs)
      const attemptId = randomBase62(24)
      const { pair, address, accountFailures } = await throttle(async () => {
        await db.deleteFrom('login_attempts').where('attempted_at', '<=', windowStart).execute()
        await db
          .insertInto('login_attempts')
          .values({ id: attemptId, email, ip_address: input.ip, attempted_at: stamp(current) })
          .execute()
        const counted = await db
          .selectFrom('login_attempts')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('email', '=', email)
          .where('attempted_at', '>', windowStart)
          .executeTakeFirstOrThrow()
        return {
          pair: await lockedFor(
            { email, ip: input.ip },
            settings.maxFailuresPerAddressAndAccount,
            windowStart,
          ),
          address: await lockedFor({ ip: input.ip }, settings.maxFailuresPerAddress, windowStart),
          // Every failure but this attempt, from any address.
          accountFailures: Number(counted.n) - 1,
        }
      })
      const forget = () =>
        throttle(() => db.deleteFrom('login_attempts').where('id', '=', attemptId).execute())
      if (pair > 0 || address > 0) {
        await forget()
        return { status: 'locked', retryAfterSeconds: Math.max(pair, address) }
      }
      const over = accountFailures - settings.accountSlowdownAfter
      if (over >= 0)
        await sleep(Math.min(settings.accountDelayMaxMs, settings.accountDelayMs * 2 ** Math.min(over, 30)))

      const user = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst()
      let matches: boolean
      try {
        // Sign-ins wait behind a few others at most; beyond that the instance is too busy to check more.
        // They wait in their own line, which checks of signed-in users cannot fill.
        const busy = { line: 'sign-in', maxQueue: PASSWORD_HASHING.maxQueue } as const
        decoy ??= hashPassword(newToken())
        matches = await verifyPassword(input.password, user?.password_hash ?? (await decoy), busy)
      } catch (error) {
        if (!(error instanceof PasswordHashingBusyError)) throw error
        await forget()
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
        const still = await trx
          .updateTable('users')
          .set({ password_hash: user.password_hash })
          .where('id', '=', user.id)
          .where('password_hash', '=', user.password_hash)
          .where('is_disabled', '=', 0)
          .executeTakeFirst()
        if (still.numUpdatedRows === 0n) return false
        // The owner's own typos from this address are forgiven; failures from elsewhere still count.
        await trx
          .deleteFrom('login_attempts')
          .where('email', '=', email)
          .where('ip_address', '=', input.ip)
          .execute()
        await trx.deleteFrom('login_attempts').where('id', '=', attemptId).execute()
        if (input.previousToken !== undefined)
          await trx.deleteFrom('admin_sessions').where('id', '=', hashToken(input.previousToken)).execute()
        // Expired sessions are otherwise deleted only when presented; sign-ins keep the table small.
        await trx
          .deleteFrom('admin_sessions')
          .where((eb) =>
            eb.or([
              eb('last_seen_at', '<=', stamp(current - settings.idleTimeoutMs)),
              eb('created_at', '<=', stamp(current - settings.absoluteTimeoutMs)),
            ]),
          )
          .execute()
        await trx
          .insertInto('admin_sessions')
          .values({
            id: hashToken(token),
            user_id: user.id,
            csrf_token: csrfToken,
            flash: null,
            created_at: stamp(current),
            last_seen_at: stamp(current),
          })
          .execute()
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
    },

    /**
     * The session a cookie's token stands for, or null when it is unknown, idle too long, past its
     * absolute lifetime, or its user is disabled (such sessions are deleted on the way).
     */
    authenticate: async (token: string): Promise<AdminSession | null> => {
      if (!TOKEN_SHAPE.test(token)) return null
      const id = hashToken(token)
      const row = await db
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
      if (!row) return null
      const current = clock()
      const idle = current - Date.parse(row.last_seen_at)
      const age = current - Date.parse(row.created_at)
      if (
        row.is_disabled === 1 ||
        !isRole(row.role) ||
        idle >= settings.idleTimeoutMs ||
        age >= settings.absoluteTimeoutMs
      ) {
        await db.deleteFrom('admin_sessions').where('id', '=', id).execute()
        return null
      }
      const touch = idle >= LAST_SEEN_RESOLUTION_MS
      let flash: string | null = null
      if (row.flash !== null) {
        // Taken only if it is still there: of two pages of one session asked at once, one shows it.
        const taken = await db
          .updateTable('admin_sessions')
          .set({ flash: null, ...(touch ? { last_seen_at: stamp(current) } : {}) })
          .where('id', '=', id)
          .where('flash', '=', row.flash)
          .executeTakeFirst()
        if (taken.numUpdatedRows > 0n) flash = row.flash
      }
      if (touch && flash === null) {
        await db
          .updateTable('admin_sessions')
          .set({ last_seen_at: stamp(current) })
          .where('id', '=', id)
          .execute()
      }
      return {
        id,
        csrfToken: row.csrf_token,
        user: { id: row.user_id, email: row.email, role: row.role },
        flash: readFlash(flash),
      }
    },

    /**
     * Checks a signed-in user's current password (before their password changes), under a throttle
     * like sign-in's with the session in the place of the address: a session with too many recent
     * wrong answers is ended without a check, and every check of a user with too many wrong answers
     * from anywhere is slowed, never refused, so that a stolen session can neither guess nor keep
     * the owner from changing the password from a new one. Failures count only here, never against
     * signing in. The check waits in the hashing queue's `account` line, one at a time per user.
     */
    async checkCurrentPassword(
      session: AdminSession,
      password: string,
      ip: string,
    ): Promise<PasswordCheckResult> {
      const current = clock()
      const windowStart = stamp(current - settings.throttleWindowMs)
      const checkId = randomBase62(24)
      const userId = session.user.id
      // Recorded before the check and counted with the others, so concurrent guesses cannot all slip under the limit.
      await db.deleteFrom('password_checks').where('checked_at', '<=', windowStart).execute()
      await db
        .insertInto('password_checks')
        .values({ id: checkId, user_id: userId, session_id: session.id, checked_at: stamp(current) })
        .execute()
      const count = async (column: 'session_id' | 'user_id', value: string) => {
        const counted = await db
          .selectFrom('password_checks')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where(column, '=', value)
          .where('checked_at', '>', windowStart)
          .executeTakeFirstOrThrow()
        // Every failure but this check.
        return Number(counted.n) - 1
      }
      const forget = () => db.deleteFrom('password_checks').where('id', '=', checkId).execute()
      if ((await count('session_id', session.id)) >= settings.maxPasswordCheckFailuresPerSession) {
        await db.transaction().execute(async (trx) => {
          await trx.deleteFrom('password_checks').where('id', '=', checkId).execute()
          await trx.deleteFrom('admin_sessions').where('id', '=', session.id).execute()
          await recordAudit(trx, {
            actor: { email: session.user.email },
            action: 'session.ended',
            target: session.user.email,
            detail: { ip, reason: 'too_many_wrong_passwords' },
          })
        })
        return { status: 'signed_out' }
      }
      const over = (await count('user_id', userId)) - settings.accountSlowdownAfter
      if (over >= 0)
        await sleep(Math.min(settings.accountDelayMaxMs, settings.accountDelayMs * 2 ** Math.min(over, 30)))

      const user = await db
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', userId)
        .executeTakeFirst()
      let matches: boolean
      try {
        matches =
          user !== undefined &&
          (await verifyPassword(password, user.password_hash, {
            line: 'account',
            maxQueue: PASSWORD_HASHING.maxQueue,
            owner: userId,
            maxPerOwner: PASSWORD_HASHING.maxChecksPerUser,
          }))
      } catch (error) {
        if (!(error instanceof PasswordHashingBusyError)) throw error
        await forget()
        return { status: 'busy', retryAfterSeconds: error.retryAfterSeconds }
      }
      if (matches) {
        // This session's own typos are forgiven; failures from other sessions still count.
        await db.deleteFrom('password_checks').where('session_id', '=', session.id).execute()
        return { status: 'right' }
      }
      await recordAudit(db, {
        actor: { email: session.user.email },
        action: 'session.password_check_failed',
        target: session.user.email,
        detail: { ip },
      })
      return { status: 'wrong' }
    },

    /**
     * Clears the sign-in throttle of an email (`lectern users unlock`): its recorded failures from
     * every address, so locks on it lift and its slowdown ends at once. Returns how many were cleared.
     */
    async clearSignInFailures(email: string): Promise<number> {
      const result = await db
        .deleteFrom('login_attempts')
        .where('email', '=', email.trim().toLowerCase().slice(0, MAX_EMAIL_LENGTH))
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    },

    /** Ends the session a token stands for; an unknown token is ignored. */
    signOut: async (token: string): Promise<void> => {
      if (TOKEN_SHAPE.test(token))
        await db.deleteFrom('admin_sessions').where('id', '=', hashToken(token)).execute()
    },

    /** Leaves a message for the session's next page (after a redirect). */
    setFlash: async (sessionId: string, flash: Flash): Promise<void> => {
      await db
        .updateTable('admin_sessions')
        .set({ flash: JSON.stringify(flash) })
        .where('id', '=', sessionId)
        .execute()
    },
  }
}

export type SessionService = ReturnType<typeof createSessionService>
