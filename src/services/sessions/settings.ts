import type { Kysely } from 'kysely'
import type { Database } from '../../db/tables.js'
import { formatTimestamp } from '../../time.js'

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

/** What every session operation shares: the database, the settings with their defaults, the clock. */
export interface SessionContext {
  db: Kysely<Database>
  settings: typeof SESSION_DEFAULTS
  clock: () => number
  /** A time from `clock` as stored. */
  stamp: (ms: number) => string
  sleep: (ms: number) => Promise<void>
}

/** The context of one session service: `options` over {@link SESSION_DEFAULTS}. */
export function sessionContext(db: Kysely<Database>, options: SessionOptions): SessionContext {
  return {
    db,
    settings: { ...SESSION_DEFAULTS, ...options },
    clock: options.clock ?? Date.now,
    stamp: (ms: number) => formatTimestamp(new Date(ms)),
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
  }
}

/**
 * The slowdown of an account with `failures` recent failures: none up to `accountSlowdownAfter`,
 * then `accountDelayMs` doubling with each further one, up to `accountDelayMaxMs`.
 */
export async function slowDown(context: SessionContext, failures: number): Promise<void> {
  const { settings } = context
  const over = failures - settings.accountSlowdownAfter
  if (over >= 0)
    await context.sleep(
      Math.min(settings.accountDelayMaxMs, settings.accountDelayMs * 2 ** Math.min(over, 30)),
    )
}
