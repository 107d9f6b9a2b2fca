import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Kysely } from 'kysely'
import { guarded } from '../db/client.js'
import type { Database } from '../db/tables.js'
import { randomBase62 } from '../ids.js'
import { formatTimestamp } from '../time.js'
import { hashPassword, verifyPassword } from './passwords.js'
import { isRole, type Role } from './roles.js'

/** How long dashboard sessions live and how sign-ins are throttled; every field has a default. */
export interface SessionOptions {
  /** Milliseconds since the epoch; tests pass a clock they move. */
  clock?: () => number
  /** A session unused for this long ends (default 30 minutes). */
  idleTimeoutMs?: number
  /** A session ends this long after sign-in, however busy (default 12 hours). */
  absoluteTimeoutMs?: number
  /** Failed sign-ins for one email within the window before it is locked (default 5). */
  maxFailuresPerAccount?: number
  /** Failed sign-ins from one IP address within the window before it is locked (default 20). */
  maxFailuresPerIp?: number
  /** The sliding window failures are counted over (default 15 minutes). */
  throttleWindowMs?: number
}

export const SESSION_DEFAULTS = {
  idleTimeoutMs: 30 * 60_000,
  absoluteTimeoutMs: 12 * 60 * 60_000,
  maxFailuresPerAccount: 5,
  maxFailuresPerIp: 20,
  throttleWindowMs: 15 * 60_000,
} satisfies Required<Omit<SessionOptions, 'clock'>>

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
  /** Too many recent failures for this email or this IP address; the password was not checked. */
  | { status: 'locked'; retryAfterSeconds: number }

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

  /** Seconds until the oldest of the failures that keep `column` locked leaves the window. */
  const lockedFor = async (column: 'email' | 'ip_address', value: string, max: number, since: string) => {
    const rows = await db
      .selectFrom('login_attempts')
      .select('attempted_at')
      .where(column, '=', value)
      .where('attempted_at', '>', since)
      .orderBy('attempted_at', 'desc')
      .limit(max + 1)
      .execute()
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
     * Checks an email and password and opens a session. The attempt is recorded before the password
     * is checked and counted together with the earlier ones, so that concurrent guesses cannot all
     * slip under the limit; an attempt refused by the lock is not counted (a lock lifts on time
     * however hard it is hammered); a success removes its attempt and resets the account's count.
     * `previousToken`, the session the browser held before, is ended: the session id always changes
     * at sign-in.
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
      const { account, ip } = await throttle(async () => {
        await db.deleteFrom('login_attempts').where('attempted_at', '<=', windowStart).execute()
        await db
          .insertInto('login_attempts')
          .values({ id: attemptId, email, ip_address: input.ip, attempted_at: stamp(current) })
          .execute()
        return {
          account: await lockedFor('email', email, settings.maxFailuresPerAccount, windowStart),
          ip: await lockedFor('ip_address', input.ip, settings.maxFailuresPerIp, windowStart),
        }
      })
      if (account > 0 || ip > 0) {
        await throttle(() => db.deleteFrom('login_attempts').where('id', '=', attemptId).execute())
        return { status: 'locked', retryAfterSeconds: Math.max(account, ip) }
      }

      const user = await guarded(() =>
        db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst(),
      )
      decoy ??= hashPassword(newToken())
      const matches = await verifyPassword(input.password, user?.password_hash ?? (await decoy))
      if (!user || !matches || !isRole(user.role)) return { status: 'invalid' }
      if (user.is_disabled === 1) return { status: 'disabled' }

      const token = newToken()
      const csrfToken = newToken()
      await guarded(() =>
        db.transaction().execute(async (trx) => {
          await trx.deleteFrom('login_attempts').where('email', '=', email).execute()
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
        }),
      )
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
    authenticate: (token: string): Promise<AdminSession | null> =>
      guarded(async () => {
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
        if (touch || row.flash !== null) {
          await db
            .updateTable('admin_sessions')
            .set({ flash: null, ...(touch ? { last_seen_at: stamp(current) } : {}) })
            .where('id', '=', id)
            .execute()
        }
        return {
          id,
          csrfToken: row.csrf_token,
          user: { id: row.user_id, email: row.email, role: row.role },
          flash: readFlash(row.flash),
        }
      }),

    /** Ends the session a token stands for; an unknown token is ignored. */
    signOut: (token: string): Promise<void> =>
      guarded(async () => {
        if (TOKEN_SHAPE.test(token))
          await db.deleteFrom('admin_sessions').where('id', '=', hashToken(token)).execute()
      }),

    /** Leaves a message for the session's next page (after a redirect). */
    setFlash: (sessionId: string, flash: Flash): Promise<void> =>
      guarded(async () => {
        await db
          .updateTable('admin_sessions')
          .set({ flash: JSON.stringify(flash) })
          .where('id', '=', sessionId)
          .execute()
      }),
  }
}

export type SessionService = ReturnType<typeof createSessionService>
