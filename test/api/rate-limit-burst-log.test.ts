import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { randomBase62 } from '../../src/ids.js'
import { RedisRateLimiter } from '../../src/ratelimit/redis.js'
import { TEST_DIALECT, TEST_REDIS_URL } from '../harness.js'

/**
 * The Redis store's burst log on a real Redis, whose own clock (`TIME`) dates each request: the
 * log must hold the requests of the last second only, however high the burst limit is, or a key
 * that is never refused would grow it by one entry per request for as long as it stays busy.
 */
describe.runIf(TEST_DIALECT === 'postgres')("a key's burst log in Redis", () => {
  const opened: Redis[] = []
  afterEach(() => {
    for (const client of opened.splice(0)) client.disconnect()
  })

  it("holds only the last second's requests when the burst limit is far above them", async () => {
    const client = new Redis(TEST_REDIS_URL)
    opened.push(client)
    const prefix = `lectern-test:${randomBase62(10)}:`
    const limiter = new RedisRateLimiter(client, { perHour: 1_000_000, perSecond: 1_000_000 }, prefix)
    const burstLog = `${prefix}{key_a}:s`
    for (let i = 0; i < 40; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    expect(await client.llen(burstLog)).toBe(40)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const decision = await limiter.consume('key_a')
    expect(decision).toMatchObject({ allowed: true, remaining: 1_000_000 - 41 })
    expect(await client.llen(burstLog)).toBe(1)
  })

  it('still refuses the request over the burst limit once aged requests have left the log', async () => {
    const client = new Redis(TEST_REDIS_URL)
    opened.push(client)
    const prefix = `lectern-test:${randomBase62(10)}:`
    const limiter = new RedisRateLimiter(client, { perHour: 100, perSecond: 3 }, prefix)
    for (let i = 0; i < 3; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    for (let i = 0; i < 3; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    expect(await client.llen(`${prefix}{key_a}:s`)).toBe(3)
    expect(await limiter.consume('key_a')).toMatchObject({ allowed: false, retryAfter: 1 })
  })
})
