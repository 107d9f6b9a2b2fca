import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { randomBase62 } from '../../src/ids.js'
import { RedisRateLimiter } from '../../src/ratelimit/redis.js'
import { TEST_DIALECT, TEST_REDIS_URL } from '../harness.js'

/**
 * The Redis store sends the requests of one key made in the same turn of the event loop, or while a
 * call of that key is in Redis, together in one script call; these tests hold each request to the
 * rules of one request counted alone.
 */
describe.runIf(TEST_DIALECT === 'postgres')('counting a burst of one key in Redis', () => {
  const opened: Redis[] = []
  afterEach(() => {
    for (const client of opened.splice(0)) client.disconnect()
  })

  /** A limiter on a real Redis, and the number of script calls it has made there. */
  const limiterWith = (perHour: number, perSecond: number) => {
    const client = new Redis(TEST_REDIS_URL)
    opened.push(client)
    const limiter = new RedisRateLimiter(client, { perHour, perSecond }, `lectern-test:${randomBase62(10)}:`)
    // Counts the limiter's calls of its script (each one round trip), then lets each go to Redis,
    // once `held` (if a test sets it) settles: a round trip that takes as long as the test wants.
    const scripts: { count: number; held?: Promise<void> } = { count: 0 }
    const counted = client as unknown as Record<'lecternConsume', (...args: unknown[]) => Promise<unknown>>
    const consume = counted.lecternConsume.bind(client)
    counted.lecternConsume = async (...args) => {
      scripts.count += 1
      const held = scripts.held
      scripts.held = undefined
      if (held) await held
      return consume(...args)
    }
    return { limiter, client, scripts }
  }

  /** A promise and the functions that settle it. */
  const gate = () => {
    let open!: () => void
    let fail!: (reason: Error) => void
    const held = new Promise<void>((resolve, reject) => {
      open = resolve
      fail = reject
    })
    return { held, open, fail }
  }
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

  it('decides the requests of one turn with one script call, each in the order it was made', async () => {
    const { limiter, scripts } = limiterWith(100, 10)
    const decisions = await Promise.all(Array.from({ length: 15 }, () => limiter.consume('key_a')))
    expect(decisions.map((d) => d.allowed)).toEqual([...Array(10).fill(true), ...Array(5).fill(false)])
    expect(decisions.slice(0, 10).map((d) => d.remaining)).toEqual([99, 98, 97, 96, 95, 94, 93, 92, 91, 90])
    for (const refused of decisions.slice(10)) {
      expect(refused).toMatchObject({ remaining: 90, retryAfter: 1 })
      expect(refused.charge).toBeUndefined()
    }
    expect(scripts.count).toBe(1)
    // The next turn's request meets the burst log the batch left.
    expect(await limiter.consume('key_a')).toMatchObject({ allowed: false, remaining: 90 })
    expect(scripts.count).toBe(2)
  })

  it('stops at the hourly limit inside a batch, and writes nothing for a batch refused whole', async () => {
    const { limiter, client } = limiterWith(3, 100)
    const decisions = await Promise.all(Array.from({ length: 5 }, () => limiter.consume('key_a')))
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ])
    const hourKey = `${limiter.prefix}{key_a}:h`
    expect(await client.hget(hourKey, 'count')).toBe('3')
    const refused = await Promise.all([limiter.consume('key_a'), limiter.consume('key_a')])
    expect(refused.map((d) => d.allowed)).toEqual([false, false])
    expect(await client.hget(hourKey, 'count')).toBe('3')
  })

  it('counts each key of a turn in its own call', async () => {
    const { limiter, scripts } = limiterWith(100, 1)
    const decisions = await Promise.all(
      ['key_a', 'key_b', 'key_c', 'key_a'].map((key) => limiter.consume(key)),
    )
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false])
    expect(scripts.count).toBe(3)
  })

  it('sends the requests made while a batch of their key is in Redis together, in the next call', async () => {
    const { limiter, scripts } = limiterWith(100, 10)
    const slow = gate()
    scripts.held = slow.held
    const first = Array.from({ length: 3 }, () => limiter.consume('key_a'))
    await nextTurn()
    expect(scripts.count).toBe(1)
    // Three more turns, four requests each, while the first batch waits for its answer.
    const later = []
    for (let turn = 0; turn < 3; turn++) {
      later.push(...Array.from({ length: 4 }, () => limiter.consume('key_a')))
      await nextTurn()
    }
    expect(scripts.count).toBe(1)
    slow.open()
    const decisions = await Promise.all([...first, ...later])
    expect(scripts.count).toBe(2)
    expect(decisions.map((d) => d.allowed)).toEqual([...Array(10).fill(true), ...Array(5).fill(false)])
    expect(decisions.slice(0, 10).map((d) => d.remaining)).toEqual([99, 98, 97, 96, 95, 94, 93, 92, 91, 90])
  })

  it('fails the requests waiting behind a batch that failed with it, and sends the next ones', async () => {
    const { limiter, scripts } = limiterWith(100, 10)
    const broken = gate()
    scripts.held = broken.held
    const first = Array.from({ length: 2 }, () => limiter.consume('key_a'))
    await nextTurn()
    const behind = Array.from({ length: 2 }, () => limiter.consume('key_a'))
    broken.fail(new Error('connection lost'))
    const outcomes = await Promise.allSettled([...first, ...behind])
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'rejected',
      'rejected',
      'rejected',
      'rejected',
    ])
    expect(scripts.count).toBe(1)
    // Nothing was charged, and the key's next request goes to Redis again.
    expect(await limiter.consume('key_a')).toMatchObject({ allowed: true, remaining: 99 })
    expect(scripts.count).toBe(2)
  })

  it('fails every request of a batch when Redis cannot be reached', async () => {
    const { limiter, client } = limiterWith(100, 10)
    client.disconnect()
    const outcomes = await Promise.allSettled(Array.from({ length: 3 }, () => limiter.consume('key_a')))
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected'])
  })
  // The burst log, dated by Redis's own clock, holds the last second's requests only, however high
  // the limit: else a key never refused would grow it by one entry per request while it stays busy.
  const burstLogLength = (limiter: RedisRateLimiter, client: Redis) =>
    client.llen(`${limiter.prefix}{key_a}:s`)
  const pastASecond = () => new Promise((resolve) => setTimeout(resolve, 1100))

  it("holds only the last second's requests in the burst log when the limit is far above them", async () => {
    const { limiter, client } = limiterWith(1_000_000, 1_000_000)
    for (let i = 0; i < 40; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    expect(await burstLogLength(limiter, client)).toBe(40)
    await pastASecond()
    expect(await limiter.consume('key_a')).toMatchObject({ allowed: true, remaining: 1_000_000 - 41 })
    expect(await burstLogLength(limiter, client)).toBe(1)
  })

  it('still refuses the request over the burst limit once aged requests have left the log', async () => {
    const { limiter, client } = limiterWith(100, 3)
    for (let i = 0; i < 3; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    await pastASecond()
    for (let i = 0; i < 3; i++) expect((await limiter.consume('key_a')).allowed).toBe(true)
    expect(await burstLogLength(limiter, client)).toBe(3)
    expect(await limiter.consume('key_a')).toMatchObject({ allowed: false, retryAfter: 1 })
  })
})
