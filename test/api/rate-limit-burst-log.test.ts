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

  /** A limiter on a real Redis with a prefix of its own, and the length of key_a's burst log there. */
  const limiterOnRedis = (perHour: number, perSecond: number) => {
    const client = new Redis(TEST_REDIS_URL)
    opened.push(client)
    const prefix = `lectern-test:${randomBase62(10)}:`
    const limiter = new RedisRateLimiter(client, { perHour, perSecond }, prefix)
    return { limiter, burstLogLength: () => client.llen(`${prefix}{key_a}:s`) }
  }
  const pastASecond = () => new Promise((resolve) => setTimeout(resolve, 1100))

  it("holds only the last second's requests when the burst limit is far above them", async () => {
    const { limiter, burstLogLength } = limiterOnRedis(1_000_000, 1_000_000)
    for (let i = 0; i < 40; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    expect(await burstLogLength()).toBe(40)
    await pastASecond()
    const decision = await limiter.consume('key_a')
    expect(decision).toMatchObject({ allowed: true, remaining: 1_000_000 - 41 })
    expect(await burstLogLength()).toBe(1)
  })

  it('still refuses the request over the burst limit once aged requests have left the log', async () => {
    const { limiter, burstLogLength } = limiterOnRedis(100, 3)
    for (let i = 0; i < 3; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    await pastASecond()
    for (let i = 0; i < 3; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    expect(await burstLogLength()).toBe(3)
    expect(await limiter.consume('key_a')).toMatchObject({ allowed: false, retryAfter: 1 })
  })
})
