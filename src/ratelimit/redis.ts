import type { Redis } from 'ioredis'
import {
  HOUR_MS,
  type LimiterStatus,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimits,
  SECOND_MS,
} from './limiter.js'

/**
 * Both limits in one Lua script: one round trip, atomic on the Redis server, so requests spread
 * over many instances are counted exactly. The clock is Redis's own (`TIME`), so instances with
 * drifting clocks still agree. The hourly window is a hash {start, count}; the burst limit is a
 * list of the last `perSecond` allowed request times, newest first (a sliding log, not a
 * clock-aligned window). Returns {allowed, count, windowStart, retryAfterMs}.
 */
const CONSUME_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local perHour = tonumber(ARGV[1])
local perSecond = tonumber(ARGV[2])
local hourMs = tonumber(ARGV[3])
local secondMs = tonumber(ARGV[4])
local window = redis.call('HMGET', KEYS[1], 'start', 'count')
local start = tonumber(window[1])
local count = tonumber(window[2])
if (not start) or now >= start + hourMs then
  start = now
  count = 0
end
if count >= perHour then
  return {0, count, start, start + hourMs - now}
end
if redis.call('LLEN', KEYS[2]) >= perSecond then
  local oldest = tonumber(redis.call('LINDEX', KEYS[2], perSecond - 1))
  if now - oldest < secondMs then
    return {0, count, start, oldest + secondMs - now}
  end
end
count = count + 1
redis.call('HSET', KEYS[1], 'start', start, 'count', count)
redis.call('PEXPIREAT', KEYS[1], start + hourMs)
redis.call('LPUSH', KEYS[2], now)
redis.call('LTRIM', KEYS[2], 0, perSecond - 1)
redis.call('PEXPIRE', KEYS[2], secondMs * 2)
return {1, count, start, 0}
`

type ConsumeReply = [number, number, number, number]

interface RedisWithConsume extends Redis {
  lecternConsume(hourKey: string, burstKey: string, ...args: number[]): Promise<ConsumeReply>
}

/** Counts in Redis, shared by every instance that uses the same Redis and `prefix`. */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RedisWithConsume

  constructor(
    redis: Redis,
    private readonly limits: RateLimits,
    private readonly prefix = 'lectern:rl:',
  ) {
    if (!('lecternConsume' in redis)) {
      // defineCommand sends EVALSHA and falls back to EVAL once if the script is not cached yet.
      redis.defineCommand('lecternConsume', { numberOfKeys: 2, lua: CONSUME_SCRIPT })
    }
    this.redis = redis as RedisWithConsume
  }

  async consume(key: string): Promise<RateLimitDecision> {
    const { perHour, perSecond } = this.limits
    // The hash tag keeps both keys of one API key in the same Redis Cluster slot.
    const base = `${this.prefix}{${key}}`
    const [allowed, count, start, retryAfterMs] = await this.redis.lecternConsume(
      `${base}:h`,
      `${base}:s`,
      perHour,
      perSecond,
      HOUR_MS,
      SECOND_MS,
    )
    return {
      allowed: allowed === 1,
      limit: perHour,
      remaining: Math.max(0, perHour - count),
      resetAt: Math.ceil((start + HOUR_MS) / 1000),
      ...(allowed === 1 ? {} : { retryAfter: Math.max(1, Math.ceil(retryAfterMs / 1000)) }),
    }
  }

  status(): LimiterStatus {
    return { store: 'redis', fallback: false }
  }

  /** The Redis client belongs to whoever created it; closing the limiter leaves it open. */
  async close(): Promise<void> {}
}
