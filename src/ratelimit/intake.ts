import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'

/** The per-address limit of public form posts: accepted posts per key in any rolling minute. */
export interface IntakeLimiter {
  /**
   * Counts one accepted post for `key` when fewer than the limit were counted in the last minute;
   * otherwise counts nothing and says how many seconds until one more would be allowed.
   */
  take(key: string): Promise<{ allowed: boolean; retryAfter: number }>
  close(): Promise<void>
}

export const MINUTE_MS = 60_000

/**
 * In this process's memory: a sliding log of the times of each key's last `perMinute` accepted
 * posts. Node runs it synchronously, so it is exact under concurrency.
 */
export class MemoryIntakeLimiter implements IntakeLimiter {
  private readonly logs = new Map<string, number[]>()
  private lastSweep = 0

  constructor(
    private readonly perMinute: number,
    private readonly clock: () => number = Date.now,
  ) {}

  async take(key: string): Promise<{ allowed: boolean; retryAfter: number }> {
    return this.takeSync(key)
  }

  takeSync(key: string): { allowed: boolean; retryAfter: number } {
    const now = this.clock()
    this.sweep(now)
    let log = this.logs.get(key)
    if (log === undefined) {
      log = []
      this.logs.set(key, log)
    }
    // The log is in time order: what expired is at its start, so a post costs what expired since the
    // last, not a pass over a minute of posts (thousands, under a high limit).
    let expired = 0
    while (expired < log.length && (log[expired] as number) <= now - MINUTE_MS) expired++
    if (expired > 0) log.splice(0, expired)
    if (log.length >= this.perMinute) {
      const oldest = log[log.length - this.perMinute] as number
      return { allowed: false, retryAfter: Math.max(1, Math.ceil((oldest + MINUTE_MS - now) / 1000)) }
    }
    log.push(now)
    return { allowed: true, retryAfter: 0 }
  }

  /** Forgets keys with nothing in the last minute, at most once a minute. */
  private sweep(now: number): void {
    if (now - this.lastSweep < MINUTE_MS) return
    this.lastSweep = now
    for (const [key, log] of this.logs)
      if ((log[log.length - 1] ?? 0) <= now - MINUTE_MS) this.logs.delete(key)
  }

  async close(): Promise<void> {}
}

/**
 * The same sliding log in Redis, as a sorted set scored by time, checked and added to in one Lua
 * call: atomic on the server, so posts to many instances are counted exactly. The clock is
 * Redis's own, so instances with drifting clocks agree. Returns {allowed, retryAfterMs}.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return {0, tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return {1, 0}
`

interface RedisWithTake extends Redis {
  lecternIntakeTake(
    key: string,
    perMinute: number,
    windowMs: number,
    member: string,
  ): Promise<[number, number]>
}

export class RedisIntakeLimiter implements IntakeLimiter {
  private readonly redis: RedisWithTake

  constructor(
    redis: Redis,
    private readonly perMinute: number,
    private readonly prefix = 'lectern:intake:',
  ) {
    // Sent as EVALSHA (EVAL once if Redis does not have the script yet): a post carries the
    // script's hash instead of its text, and Redis need not hash the text again for each post.
    if (!('lecternIntakeTake' in redis))
      redis.defineCommand('lecternIntakeTake', { numberOfKeys: 1, lua: TAKE_SCRIPT })
    this.redis = redis as RedisWithTake
  }

  async take(key: string): Promise<{ allowed: boolean; retryAfter: number }> {
    const [allowed, retryAfterMs] = await this.redis.lecternIntakeTake(
      this.prefix + key,
      this.perMinute,
      MINUTE_MS,
      randomUUID(),
    )
    return {
      allowed: allowed === 1,
      retryAfter: allowed === 1 ? 0 : Math.max(1, Math.ceil(retryAfterMs / 1000)),
    }
  }

  async close(): Promise<void> {}
}

/**
 * Redis while it answers, this process's memory while it does not: a post is never refused, nor
 * let through unlimited, because Redis is away.
 */
export class FallbackIntakeLimiter implements IntakeLimiter {
  constructor(
    private readonly shared: IntakeLimiter,
    private readonly local: MemoryIntakeLimiter,
    private readonly onFallback: (error: unknown) => void = () => {},
  ) {}

  async take(key: string): Promise<{ allowed: boolean; retryAfter: number }> {
    try {
      return await this.shared.take(key)
    } catch (error) {
      this.onFallback(error)
      return this.local.takeSync(key)
    }
  }

  async close(): Promise<void> {
    await this.shared.close()
  }
}
