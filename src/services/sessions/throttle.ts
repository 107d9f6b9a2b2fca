import {
  countAttemptsOnEmail,
  deleteAttempt,
  deleteAttemptsUpTo,
  insertAttempt,
  newestAttemptTimes,
} from '../../db/repositories/login-attempts.js'
import type { SessionContext } from './settings.js'

/** The longest email a sign-in attempt is recorded under; longer input cannot be a user anyway. */
const MAX_EMAIL_LENGTH = 254

/** An email as sign-in attempts are recorded under: as typed, trimmed, lower-cased, cut to length. */
export const attemptEmail = (email: string) => email.trim().toLowerCase().slice(0, MAX_EMAIL_LENGTH)

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

/** Runs a throttle query; any failure refuses the sign-in. */
export async function throttled<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query()
  } catch (error) {
    throw new SignInUnavailableError({ cause: error })
  }
}

/** Seconds until the oldest of the failures that keep these attempts locked leaves the window. */
async function lockedFor(
  context: SessionContext,
  match: { email?: string; ip?: string },
  max: number,
  since: string,
): Promise<number> {
  const times = await newestAttemptTimes(context.db, match, since, max + 1)
  // The newest row is this attempt; the lock lifts when the oldest of the `max` failures before it
  // leaves the window.
  if (times.length <= max) return 0
  const oldestThatCounts = Date.parse(times[max])
  return Math.max(
    1,
    Math.ceil((oldestThatCounts + context.settings.throttleWindowMs - context.clock()) / 1000),
  )
}

/**
 * Records a sign-in attempt on `email` from `ip` at `current` and counts it with the earlier ones
 * in the window (so that concurrent guesses cannot all slip under a limit): how long the pair and
 * the address are locked for (0: not), and how many failures the email has from any address
 * besides this attempt. Any failure of the store refuses the sign-in.
 */
export function recordAttempt(
  context: SessionContext,
  attempt: { id: string; email: string; ip: string; current: number; windowStart: string },
) {
  const { db, settings, stamp } = context
  const { id, email, ip, current, windowStart } = attempt
  return throttled(async () => {
    await deleteAttemptsUpTo(db, windowStart)
    await insertAttempt(db, { id, email, ip_address: ip, attempted_at: stamp(current) })
    const counted = await countAttemptsOnEmail(db, email, windowStart)
    return {
      pair: await lockedFor(context, { email, ip }, settings.maxFailuresPerAddressAndAccount, windowStart),
      address: await lockedFor(context, { ip }, settings.maxFailuresPerAddress, windowStart),
      // Every failure but this attempt, from any address.
      accountFailures: counted - 1,
    }
  })
}

/** Forgets attempt `id` (one that was not a failure: refused unchecked, or too busy to check). */
export const forgetAttempt = (context: SessionContext, id: string) =>
  throttled(() => deleteAttempt(context.db, id))
