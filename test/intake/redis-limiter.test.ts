import { createRequire } from 'node:module'
import type { Redis as RedisClient } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIntakeLimiter } from '../../src/ratelimit/index.js'
import type { IntakeLimiter } from '../../src/ratelimit/intake.js'
import { type RedisServer, startRedisServer, waitFor } from '../cluster/support.js'

const { Redis } = createRequire(import.meta.url)('ioredis') as { Redis: typeof RedisClient }

/**
 * The per-address limit counted in a Redis of the test's own: the script goes by its hash, so a
 * Redis that forgot its scripts must still count every post there, not fall back to memory.
 */
describe('the per-address limit in Redis', () => {
  let redis: RedisServer
  let admin: RedisClient
  let limiter: IntakeLimiter
  const warnings: unknown[] = []

  beforeAll(async () => {
    redis = await startRedisServer()
    admin = new Redis(redis.url)
    limiter = createIntakeLimiter(
      { REDIS_URL: redis.url, INTAKE_RATE_LIMIT_PER_MINUTE: 3 },
      { warn: (object) => warnings.push(object) },
    )
    // Posts made before its connection is up are counted in memory: wait until one lands in Redis.
    await waitFor(async () => {
      await limiter.take('warm-up')
      return (await admin.zcard('lectern:intake:warm-up')) > 0
    }, 5000)
    warnings.length = 0
  })
  afterAll(async () => {
    await limiter.close()
    admin.disconnect()
    await redis.kill()
  })

  /** How many times Redis ran each way of calling a script since the last `CONFIG RESETSTAT`. */
  async function scriptCalls(): Promise<{ eval: number; evalsha: number }> {
    const stats = await admin.info('commandstats')
    const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0)
    return { eval: calls('eval'), evalsha: calls('evalsha') }
  }

  it('sends the script by its hash, not its text, once Redis has it', async () => {
    await admin.config('RESETSTAT')
    for (let i = 0; i < 3; i++) await limiter.take(`form_b|198.51.100.${i}`)
    expect(await scriptCalls()).toEqual({ eval: 0, evalsha: 3 })
  })

  it('keeps counting in Redis after Redis forgets its scripts', async () => {
    const taken = []
    for (let i = 0; i < 4; i++) taken.push((await limiter.take('form_a|203.0.113.1')).allowed)
    expect(taken).toEqual([true, true, true, false])
    expect(await admin.zcard('lectern:intake:form_a|203.0.113.1')).toBe(3)

    await admin.script('FLUSH')
    await admin.config('RESETSTAT')
    // The count kept in Redis still refuses the address, and a new address is counted there.
    expect(await limiter.take('form_a|203.0.113.1')).toMatchObject({ allowed: false })
    expect(await limiter.take('form_a|203.0.113.2')).toEqual({ allowed: true, retryAfter: 0 })
    expect(await admin.zcard('lectern:intake:form_a|203.0.113.2')).toBe(1)
    // The text went once, when the hash was refused; after it, the hash again.
    expect(await scriptCalls()).toEqual({ eval: 1, evalsha: 2 })
    expect(warnings).toEqual([])
  })
})
