/** What one request costs against a key's limits, and the numbers for the response headers. */
export interface RateLimitDecision {
  allowed: boolean
  /** The hourly limit (`X-RateLimit-Limit`). */
  limit: number
  /** Hourly requests left after this one; never negative. */
  remaining: number
  /** Unix time in seconds when the current hourly window ends. */
  resetAt: number
  /** Seconds to wait before retrying; set only when `allowed` is false. */
  retryAfter?: number
  /** What `refund` needs to take this request back; set only when `allowed` is true. */
  charge?: Charge
}

/**
 * One allowed request as a store recorded it: when (by the store's clock) and in which hourly
 * window. Opaque to callers, who only hand it back to `refund`.
 */
export interface Charge {
  store: 'memory' | 'redis'
  at: number
  windowStart: number
}

export interface RateLimits {
  perHour: number
  perSecond: number
}

/**
 * A store that counts requests per key. Both limits are checked and charged in one atomic step, so
 * a request refused by either limit charges neither: "a rejected request does not use up quota".
 */
export interface RateLimiter {
  consume(key: string): Promise<RateLimitDecision>
  /** The same, for a store that answers at once (memory): no promise to wait for. */
  consumeSync?(key: string): RateLimitDecision
  /**
   * Takes back a request `consume` allowed, for a caller that charged before it knew whether the
   * request should count (the API counts a known key while its lookup runs, and a key found revoked
   * meanwhile must not have used quota). Undoes the hourly count if the window it was made in is
   * still current, and frees its place in the burst log. Never throws: a charge that cannot be
   * taken back (the store is unreachable) stays, which errs towards the limit.
   */
  refund(key: string, charge: Charge): Promise<void>
  /** Where counting happens now: `fallback` is true while a shared store is unreachable. */
  status(): LimiterStatus
  close(): Promise<void>
}

export interface LimiterStatus {
  store: 'memory' | 'redis'
  fallback: boolean
}

export const HOUR_MS = 3_600_000
export const SECOND_MS = 1_000
