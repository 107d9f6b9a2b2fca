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
  /** Times of the last `perSecond` allowed requests, as a ring; `next` is the oldest slot. */
  recent: number[]
  next: number
}

/**
 * Counts in this process's memory. The hourly window starts at a key's first request and lasts an
 * hour. The burst limit is a sliding log of the last `perSecond` allowed requests: a request is
 * allowed only when the oldest of them is at least a second old, so no rolling one-second
 * interval ever holds more than `perSecond` — unlike a clock-aligned window, which lets twice that
 * through across a boundary. Node runs this synchronously, so it is exact under concurrency.
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
      state = { windowStart: now, count: 0, recent: state?.recent ?? [], next: state?.next ?? 0 }
      this.states.set(key, state)
    }
    const windowEnd = state.windowStart + HOUR_MS
    const decision = (allowed: boolean, retryAfterMs?: number): RateLimitDecision => ({
      allowed,
      limit: perHour,
      remaining: Math.max(0, perHour - state.count),
      resetAt: Math.ceil(windowEnd / 1000),
      ...(retryAfterMs === undefined ? {} : { retryAfter: Math.max(1, Math.ceil(retryAfterMs / 1000)) }),
      ...(allowed ? { charge: { store: 'memory' as const, at: now, windowStart: state.windowStart } } : {}),
    })
    if (state.count >= perHour) return decision(false, windowEnd - now)
    if (state.recent.length === perSecond) {
      const oldest = state.recent[state.next]
      if (now - oldest < SECOND_MS) return decision(false, oldest + SECOND_MS - now)
    }
    state.count += 1
    if (state.recent.length < perSecond) {
      state.recent.push(now)
    } else {
      state.recent[state.next] = now
      state.next = (state.next + 1) % perSecond
    }
    return decision(true)
  }

  async refund(key: string, charge: Charge): Promise<void> {
    this.refundSync(key, charge)
  }

  refundSync(key: string, charge: Charge): void {
    const state = this.states.get(key)
    if (state === undefined) return
    if (state.windowStart === charge.windowStart && state.count > 0) state.count -= 1
    // The log back in oldest-first order without the refunded time; `next` = 0 then points at the
    // oldest again, and pushes append the newest, as they do before the log first fills.
    const ordered = [...state.recent.slice(state.next), ...state.recent.slice(0, state.next)]
    const index = ordered.indexOf(charge.at)
    if (index === -1) return
    ordered.splice(index, 1)
    state.recent = ordered
    state.next = 0
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
      this.states.set(key, { windowStart: seen.windowStart, count: seen.count, recent: [], next: 0 })
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
