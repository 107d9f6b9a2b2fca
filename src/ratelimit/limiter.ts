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
