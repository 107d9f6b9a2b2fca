import type { Redis } from 'ioredis'
import {
  type Charge,
  HOUR_MS,
  type LimiterStatus,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimits,
  SECOND_MS,
} from './limiter.js'
import type { WindowCount } from './memory.js'

/**
 * Both limits in one Lua script: one round trip, atomic on the Redis server, so requests spread
 * over many instances are counted exactly. The clock is Redis's own (`TIME`), so instances with
 * drifting clocks still agree. The hourly window is a hash {start, count}; the burst limit is a
 * list of the last `perSecond` allowed request times, newest first (a sliding log, not a
 * clock-aligned window), less those a second old, which no longer count: a high `perSecond` costs
 * Redis memory only for the requests a key really makes. ARGV[5..6] are the instance's last-known
 * window for the key (start, count; 0 when it knows none): a floor, so that a Redis that lost its
 * data (a restart without persistence) resumes from what the instance saw instead of granting a
 * fresh hour.
 * ARGV[7] requests of the key are decided in turn, as requests arriving in the same millisecond
 * one after another would be: each is refused or charged by exactly the rules of one request.
 * Returns {windowStart, now, then allowed, count, retryAfterMs for each request}.
 */
const CONSUME_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local perHour = tonumber(ARGV[1])
local perSecond = tonumber(ARGV[2])
local hourMs = tonumber(ARGV[3])
local secondMs = tonumber(ARGV[4])
local requests = tonumber(ARGV[7])
local window = redis.call('HMGET', KEYS[1], 'start', 'count')
local start = tonumber(window[1])
local count = tonumber(window[2])
if (not start) or now >= start + hourMs then
  start = now
  count = 0
end
local floorStart = tonumber(ARGV[5])
local floorCount = tonumber(ARGV[6])
if floorCount > count and now < floorStart + hourMs then
  start = math.min(start, floorStart)
  count = floorCount
end
local reply = {start, now}
local charged = false
for i = 1, requests do
  local refusedFor = nil
  if count >= perHour then
    refusedFor = start + hourMs - now
  elseif redis.call('LLEN', KEYS[2]) >= perSecond then
    local oldest = tonumber(redis.call('LINDEX', KEYS[2], perSecond - 1))
    if now - oldest < secondMs then refusedFor = oldest + secondMs - now end
  end
  if refusedFor then
    table.insert(reply, 0)
    table.insert(reply, count)
    table.insert(reply, refusedFor)
  else
    count = count + 1
    charged = true
    redis.call('LPUSH', KEYS[2], now)
    redis.call('LTRIM', KEYS[2], 0, perSecond - 1)
    table.insert(reply, 1)
    table.insert(reply, count)
    table.insert(reply, 0)
  end
end
if charged then
  local oldest = tonumber(redis.call('LINDEX', KEYS[2], -1))
  while oldest and now - oldest >= secondMs do
    redis.call('RPOP', KEYS[2])
    oldest = tonumber(redis.call('LINDEX', KEYS[2], -1))
  end
  redis.call('HSET', KEYS[1], 'start', start, 'count', count)
  redis.call('PEXPIREAT', KEYS[1], start + hourMs)
  redis.call('PEXPIRE', KEYS[2], secondMs * 2)
end
return reply
`

/**
 * Takes back one allowed request: the hourly count, if the window it was charged in (ARGV[2]) is
 * still the key's window, and its time (ARGV[1]) in the burst log. Keys that are gone stay gone,
 * so a refund never creates one.
 */
const REFUND_SCRIPT = `
local window = redis.call('HMGET', KEYS[1], 'start', 'count')
if tonumber(window[1]) == tonumber(ARGV[2]) and tonumber(window[2]) > 0 then
  redis.call('HINCRBY', KEYS[1], 'count', -1)
end
redis.call('LREM', KEYS[2], 1, ARGV[1])
return 1
`

/** [windowStart, now, then allowed (1 or 0), count, retryAfterMs for each request]. */
type ConsumeReply = number[]

interface RedisWithConsume extends Redis {
  lecternConsume(hourKey: string, burstKey: string, ...args: number[]): Promise<ConsumeReply>
  lecternRefund(hourKey: string, burstKey: string, at: string, windowStart: string): Promise<number>
}

/** What one request cost in Redis: the decision, and the key's window as Redis now has it. */
export interface CountedDecision {
  decision: RateLimitDecision
  window: WindowCount
}

interface PendingCounts {
  floor: WindowCount | undefined
  waiting: Array<{ resolve(counted: CountedDecision): void; reject(reason: unknown): void }>
}

/** Per key: whether a batch of it is in Redis now, and the requests waiting for the next one. */
interface KeyBatches {
  sending: boolean
  next: PendingCounts | null
}

/** Counts in Redis, shared by every instance that uses the same Redis and `prefix`. */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RedisWithConsume
  /** Per key, the batch in Redis (if any) and the requests waiting for the next one. */
  private readonly batches = new Map<string, KeyBatches>()

  constructor(
    redis: Redis,
    private readonly limits: RateLimits,
    /** What every Redis key of this limiter starts with. */
    readonly prefix = 'lectern:rl:',
  ) {
    if (!('lecternConsume' in redis)) {
      // defineCommand sends EVALSHA and falls back to EVAL once if the script is not cached yet.
      redis.defineCommand('lecternConsume', { numberOfKeys: 2, lua: CONSUME_SCRIPT })
      redis.defineCommand('lecternRefund', { numberOfKeys: 2, lua: REFUND_SCRIPT })
    }
    this.redis = redis as RedisWithConsume
  }

  async consume(key: string): Promise<RateLimitDecision> {
    return (await this.consumeCounted(key)).decision
  }

  /**
   * Checks and charges a request, with `floor` as the least the key's current window may hold
   * (what this instance last knew), and reports the window Redis now has. The requests of one key
   * go to Redis together in one script call that decides each in the order they were made
   * (`CONSUME_SCRIPT`): a batch leaves at the end of the event loop's turn, and a request made while
   * a batch of its key is in Redis joins the next, which leaves when that one is answered. A burst
   * costs one round trip and one script run per turn or per round trip, however the loop's turns
   * are split (a post's database replies wake turns of their own), and every request is still
   * refused or charged on its own by the same atomic rules, after it was made.
   */
  consumeCounted(key: string, floor?: WindowCount): Promise<CountedDecision> {
    let state = this.batches.get(key)
    if (state === undefined) {
      state = { sending: false, next: null }
      this.batches.set(key, state)
    }
    let batch = state.next
    if (batch === null) {
      batch = { floor, waiting: [] }
      state.next = batch
      if (!state.sending) setImmediate(() => this.send(key))
    } else {
      // The newest floor is this instance's latest knowledge of the key's window.
      batch.floor = floor
    }
    const waiting = batch.waiting
    return new Promise<CountedDecision>((resolve, reject) => waiting.push({ resolve, reject }))
  }

  /** Sends a key's waiting batch; every request of it is answered, with the decision or the failure. */
  private async send(key: string): Promise<void> {
    const state = this.batches.get(key)
    if (state === undefined || state.next === null) return
    const batch = state.next
    state.sending = true
    state.next = null
    try {
      const counted = await this.countBatch(key, batch)
      for (const [i, waiting] of batch.waiting.entries()) waiting.resolve(counted[i] as CountedDecision)
    } catch (error) {
      // The failure came after the requests waiting behind the batch were made, so it answers them
      // too: with Redis unreachable they fall back at once instead of after a second timeout.
      // (Set again by requests made during the await, which TypeScript does not see.)
      const behind = state.next as PendingCounts | null
      state.next = null
      for (const waiting of [...batch.waiting, ...(behind?.waiting ?? [])]) waiting.reject(error)
    }
    state.sending = false
    if (state.next !== null) setImmediate(() => this.send(key))
    else this.batches.delete(key)
  }

  private async countBatch(key: string, batch: PendingCounts): Promise<CountedDecision[]> {
    const { perHour, perSecond } = this.limits
    const [hourKey, burstKey] = this.keysOf(key)
    const reply = await this.redis.lecternConsume(
      hourKey,
      burstKey,
      perHour,
      perSecond,
      HOUR_MS,
      SECOND_MS,
      batch.floor?.windowStart ?? 0,
      batch.floor?.count ?? 0,
      batch.waiting.length,
    )
    if (reply.length !== 2 + 3 * batch.waiting.length)
      throw new Error(`Redis answered ${reply.length} values for ${batch.waiting.length} requests`)
    const [start, now] = reply
    // Every request of the batch reports the window as the script left it, after the last one.
    const window = { windowStart: start, count: reply[reply.length - 2] }
    return batch.waiting.map((_, i) => {
      const [allowed, count, retryAfterMs] = reply.slice(2 + 3 * i, 5 + 3 * i)
      return {
        decision: {
          allowed: allowed === 1,
          limit: perHour,
          remaining: Math.max(0, perHour - count),
          resetAt: Math.ceil((start + HOUR_MS) / 1000),
          ...(allowed === 1
            ? { charge: { store: 'redis' as const, at: now, windowStart: start } }
            : { retryAfter: Math.max(1, Math.ceil(retryAfterMs / 1000)) }),
        },
        window,
      }
    })
  }

  async refund(key: string, charge: Charge): Promise<void> {
    try {
      await this.refundOrThrow(key, charge)
    } catch {
      // Unreachable: the charge stays, erring towards the limit (see `RateLimiter.refund`).
    }
  }

  /** `refund`, but saying when Redis could not be reached. */
  async refundOrThrow(key: string, charge: Charge): Promise<void> {
    const [hourKey, burstKey] = this.keysOf(key)
    await this.redis.lecternRefund(hourKey, burstKey, String(charge.at), String(charge.windowStart))
  }

  /** The hash tag keeps both keys of one API key in the same Redis Cluster slot. */
  private keysOf(key: string): [string, string] {
    const base = `${this.prefix}{${key}}`
    return [`${base}:h`, `${base}:s`]
  }

  status(): LimiterStatus {
    return { store: 'redis', fallback: false }
  }

  /** The Redis client belongs to whoever created it; closing the limiter leaves it open. */
  async close(): Promise<void> {}
}
