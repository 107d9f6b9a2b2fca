import { createRequire } from 'node:module'
import type { Redis as RedisClient } from 'ioredis'
import type { Config } from '../config.js'
import { FallbackRateLimiter } from './fallback.js'
import {
  FallbackIntakeLimiter,
  type IntakeLimiter,
  MemoryIntakeLimiter,
  RedisIntakeLimiter,
} from './intake.js'
import type { RateLimiter } from './limiter.js'
import { MemoryRateLimiter } from './memory.js'
import { RedisRateLimiter } from './redis.js'

/** A connection to the Redis a limiter counts in, loaded only when configured. */
function connectRedis(url: string): RedisClient {
  const { Redis } = createRequire(import.meta.url)('ioredis') as { Redis: typeof RedisClient }
  const redis = new Redis(url, {
    // Fail fast while Redis is away instead of queueing requests behind a reconnect; the limiter's
    // fallback answers them from memory meanwhile.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    // The calls made in one turn of the event loop (posts from many addresses, API keys' batches)
    // leave in one write, and those made while one is in flight in the next: fewer system calls
    // for the server and fewer reads for Redis, with each call still its own atomic script.
    enableAutoPipelining: true,
  })
  // Connection errors surface through the limiter; without a listener ioredis would log each one.
  redis.on('error', () => {})
  return redis
}

/**
 * The limiter the configuration asks for: in memory for one instance, or Redis shared by all
 * instances (`REDIS_URL`) with an in-memory fallback while Redis cannot be reached.
 */
export function createRateLimiter(
  config: Pick<Config, 'REDIS_URL' | 'RATE_LIMIT_PER_HOUR' | 'RATE_LIMIT_PER_SECOND'>,
  log: { warn(object: unknown, message?: string): void; info(message: string): void },
): RateLimiter {
  const limits = { perHour: config.RATE_LIMIT_PER_HOUR, perSecond: config.RATE_LIMIT_PER_SECOND }
  if (!config.REDIS_URL) return new MemoryRateLimiter(limits)
  const redis = connectRedis(config.REDIS_URL)
  const limiter = new FallbackRateLimiter(
    new RedisRateLimiter(redis, limits),
    new MemoryRateLimiter(limits),
    {
      probeShared: () => redis.ping(),
      onModeChange: (mode, error) => {
        if (mode === 'local') {
          log.warn(
            { err: error },
            'Redis unreachable: counting rate limits in this instance’s memory until it returns',
          )
        } else {
          log.info('Redis reachable again: rate limits are shared across instances')
        }
      },
    },
  )
  return {
    consume: (key) => limiter.consume(key),
    refund: (key, charge) => limiter.refund(key, charge),
    status: () => limiter.status(),
    async close() {
      await limiter.close()
      redis.disconnect()
    },
  }
}

/**
 * The limiter of public form posts: in memory for one instance, or Redis shared by all instances
 * (`REDIS_URL`), falling back to memory while Redis cannot be reached.
 */
export function createIntakeLimiter(
  config: Pick<Config, 'REDIS_URL' | 'INTAKE_RATE_LIMIT_PER_MINUTE'>,
  log: { warn(object: unknown, message?: string): void },
): IntakeLimiter {
  const perMinute = config.INTAKE_RATE_LIMIT_PER_MINUTE
  if (!config.REDIS_URL) return new MemoryIntakeLimiter(perMinute)
  const redis = connectRedis(config.REDIS_URL)
  const limiter = new FallbackIntakeLimiter(
    new RedisIntakeLimiter(redis, perMinute),
    new MemoryIntakeLimiter(perMinute),
    (error) => log.warn({ err: error }, 'Redis unreachable: counting form posts in this instance’s memory'),
  )
  return {
    take: (key) => limiter.take(key),
    async close() {
      redis.disconnect()
    },
  }
}
