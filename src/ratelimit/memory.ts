import {
  type Charge,
  HOUR_MS,
  type LimiterStatus,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimits,
  SECOND_MS,
} from './limiter.js'

/** A key's hourly window as a store last counted it: when it started (ms) and how many it allowed. */
export interface WindowCount {
  windowStart: number
  count: number
}

interface KeyState {
  windowStart: number
  count: number
  /**
   * Times of the allowed requests that still count against the burst limit, oldest first, from
   * index `first` on: at most `perSecond` of them, and none a second old. Trimmed by age as well
   * as by the limit, so a high `perSecond` costs memory only for the requests a key really makes.
   */
  recent: number[]
  first: number
}

/**
 * Counts in this process's memory. The hourly window starts at a key's first request and lasts an
 * hour. The burst limit is a sliding log of the last `perSecond` allowed requests: a request is
 * allowed only when the oldest of them is at least a second old, so no rolling one-second
 * interval ever holds more than `perSecond` — unlike a clock-aligned window, which lets twice that
 * through across a boundary. The log keeps only the last second's requests. Node runs this
 * synchronously, so it is exact under concurrency.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly states = new Map<string, KeyState>()
  private lastSweep = 0

  constructor(
    private readonly limits: RateLimits,
    private readonly clock: () => number = Date.now,
  ) {}

  async consume(key: string): Promise<RateLimitDecision> {
    return this.consumeSync(key)
  }

  consumeSync(key: string): RateLimitDecision {
    const now = this.clock()
    this.sweep(now)
    const { perHour, perSecond } = this.limits
    let state = this.states.get(key)
    if (state === undefined || now >= state.windowStart + HOUR_MS) {
      // A new hour keeps the burst log: the last second's requests still count against the next.
      // Stryker disable next-line ArrayDeclaration: a non-number entry reads as a free slot (NaN compares false), like no entry
      state = { windowStart: now, count: 0, recent: state?.recent ?? [], first: state?.first ?? 0 }
      this.states.set(key, state)
    }
    const windowEnd = state.windowStart + HOUR_MS
    const decision = (allowed: boolean, retryAfterMs?: number): RateLimitDecision => {
      const made: RateLimitDecision = {
        allowed,
        limit: perHour,
        remaining: Math.max(0, perHour - state.count),
        resetAt: Math.ceil(windowEnd / 1000),
      }
      if (retryAfterMs !== undefined) made.retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000))
      if (allowed) made.charge = { store: 'memory', at: now, windowStart: state.windowStart }
      return made
    }
    if (state.count >= perHour) return decision(false, windowEnd - now)
    forgetAged(state, now)
    const recent = state.recent
    if (recent.length - state.first >= perSecond) {
      const oldest = recent[recent.length - perSecond] as number
      if (now - oldest < SECOND_MS) return decision(false, oldest + SECOND_MS - now)
    }
    state.count += 1
    recent.push(now)
    // Only the last `perSecond` can refuse a request; older ones (a clock stepped back) are let go.
    state.first = Math.max(state.first, recent.length - perSecond)
    return decision(true)
  }

  async refund(key: string, charge: Charge): Promise<void> {
    this.refundSync(key, charge)
  }

  refundSync(key: string, charge: Charge): void {
    const state = this.states.get(key)
    if (state === undefined) return
    if (state.windowStart === charge.windowStart && state.count > 0) state.count -= 1
    const index = state.recent.lastIndexOf(charge.at)
    if (index >= state.first) state.recent.splice(index, 1)
  }

  /** How many request times a key's burst log holds (none for a key it does not hold). */
  burstLogLength(key: string): number {
    const state = this.states.get(key)
    return state === undefined ? 0 : state.recent.length - state.first
  }

  /** The key's current hourly window, if it has one that has not ended. */
  peek(key: string): WindowCount | undefined {
    const state = this.states.get(key)
    if (state === undefined || this.clock() >= state.windowStart + HOUR_MS) return undefined
    return { windowStart: state.windowStart, count: state.count }
  }

  /**
   * Carries a count seen elsewhere (the shared store, before it went away) into this store, so a
   * key does not start a fresh hour here. A window that has ended is ignored, and a count lower
   * than what this store already holds for the same window never lowers it.
   */
  seed(key: string, seen: WindowCount): void {
    const now = this.clock()
    if (now >= seen.windowStart + HOUR_MS) return
    const state = this.states.get(key)
    if (state === undefined || now >= state.windowStart + HOUR_MS) {
      // Stryker disable next-line ArrayDeclaration: a non-number entry reads as a free slot (NaN compares false), like no entry
      this.states.set(key, { windowStart: seen.windowStart, count: seen.count, recent: [], first: 0 })
    } else if (seen.count > state.count) {
      state.count = seen.count
      state.windowStart = Math.min(state.windowStart, seen.windowStart)
    }
  }

  /** How many keys this store holds: the sweep keeps it bounded. */
  get size(): number {
    return this.states.size
  }

  status(): LimiterStatus {
    return { store: 'memory', fallback: false }
  }

  async close(): Promise<void> {
    this.states.clear()
  }

  /**
   * Forgets keys whose hourly window has ended, at most once a minute, so memory stays bounded. A
   * key is kept a second past its hour: until then its burst log still holds requests that count.
   */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return
    this.lastSweep = now
    for (const [key, state] of this.states) {
      if (now >= state.windowStart + HOUR_MS + SECOND_MS) this.states.delete(key)
    }
  }
}

/**
 * Lets go of the times at the start of a key's burst log that are a second old: they can no longer
 * refuse a request. They are cut away once they are at least half the log, so the log never holds
 * more than twice what counts, and each time is moved at most once on average.
 */
function forgetAged(state: KeyState, now: number): void {
  const recent = state.recent
  let first = state.first
  while (first < recent.length && now - (recent[first] as number) >= SECOND_MS) first++
  if (first > 0 && first * 2 >= recent.length) {
    recent.splice(0, first)
    first = 0
  }
  state.first = first
}
