import type { AddressInfo } from 'node:net'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { randomBase62 } from '../../src/ids.js'
import type { RateLimiter } from '../../src/ratelimit/limiter.js'
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js'
import { RedisRateLimiter } from '../../src/ratelimit/redis.js'
import { checkResponsesAgainstContract } from '../contract/recorder.js'
import { buildApiKey, buildForm } from '../factories.js'
import {
  createTestContext,
  TEST_DIALECT,
  TEST_REDIS_URL,
  type TestContext,
  type TestContextOptions,
} from '../harness.js'
import { expectError, expectList, request } from '../security-suite.js'

/** A whole second, so that window ends can be computed exactly. */
const T0 = Date.UTC(2030, 0, 1, 12, 0, 0)
const HOUR_S = 3600

/** A clock the tests move by hand; `at(ms)` sets it to `ms` after T0. */
function fakeClock() {
  let now = T0
  return {
    now: () => now,
    at(ms: number) {
      now = T0 + ms
    },
  }
}

const rateHeaders = (res: LightMyRequestResponse) => ({
  limit: Number(res.headers['x-ratelimit-limit']),
  remaining: Number(res.headers['x-ratelimit-remaining']),
  reset: Number(res.headers['x-ratelimit-reset']),
})

/**
 * One database for the file; each test gets an app of its own over it, with the limits it names
 * and a fresh limiter (in memory with a hand-moved clock, or Redis on PostgreSQL as the harness
 * chooses), and keys of its own.
 */
describe('rate limits', () => {
  let shared: TestContext
  let ctx: { app: FastifyInstance; database: TestContext['database'] }
  const opened: { app: FastifyInstance; limiter: RateLimiter; redis?: Redis }[] = []
  const open = async (options: Pick<TestContextOptions, 'perHour' | 'perSecond' | 'clock'> = {}) => {
    const limits = { perHour: options.perHour ?? 1000, perSecond: options.perSecond ?? 10 }
    let redis: Redis | undefined
    let limiter: RateLimiter
    if (TEST_DIALECT === 'postgres' && options.clock === undefined) {
      redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
      await redis.connect()
      limiter = new RedisRateLimiter(redis, limits, `lectern-test:${randomBase62(10)}:`)
    } else limiter = new MemoryRateLimiter(limits, options.clock)
    const app = await buildApp({
      config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: limits.perSecond },
      services: shared.services,
      limiter,
      database: shared.database,
    })
    checkResponsesAgainstContract(app)
    opened.push({ app, limiter, redis })
    ctx = { app, database: shared.database }
    return ctx
  }
  beforeAll(async () => {
    shared = await createTestContext()
  })
  afterAll(() => shared.close())
  afterEach(async () => {
    for (const { app, limiter, redis } of opened.splice(0)) {
      await app.close()
      await limiter.close()
      redis?.disconnect()
    }
  })

  const setup = async (options: Pick<TestContextOptions, 'perHour' | 'perSecond' | 'clock'>) => {
    await open(options)
    const key = await buildApiKey(ctx.database.db)
    return { key, get: (path = '/api/v1/forms', auth = key.authorization) => request(ctx.app, path, auth) }
  }

  it('puts X-RateLimit-Limit, -Remaining and -Reset on every response to a valid key', async () => {
    const clock = fakeClock()
    const { key, get } = await setup({ perHour: 50, perSecond: 1000, clock: clock.now })
    const viewer = await buildApiKey(ctx.database.db, { role: 'viewer' })
    const responses = [
      await get(),
      await get('/api/v1/forms?page=0'),
      await get('/api/v1/nope'),
      await get('/api/v1/forms/form_missing/submissions'),
      await request(ctx.app, '/api/v1/forms', key.authorization, { method: 'HEAD' }),
      await request(ctx.app, '/api/v1/forms', key.authorization, { method: 'POST', payload: {} }),
      await get('/api/v1/forms', viewer.authorization),
    ]
    expect(responses.map((r) => r.statusCode)).toEqual([200, 400, 404, 404, 200, 405, 403])
    for (const res of responses) {
      const { limit, remaining, reset } = rateHeaders(res)
      expect(limit).toBe(50)
      expect(Number.isInteger(remaining) && remaining >= 0 && remaining < 50).toBe(true)
      expect(reset).toBe(T0 / 1000 + HOUR_S)
    }
  })

  it('counts a valid key refused before routing (a URL too long or malformed) and puts its headers on the refusal', async () => {
    const clock = fakeClock()
    const { key, get } = await setup({ perHour: 3, perSecond: 1000, clock: clock.now })
    const tooLong = `/api/v1/forms?q=${'a'.repeat(9000)}`
    const malformed = '/api/v1/forms/%zz/submissions'
    const refusals = [await get(tooLong), await get(malformed)]
    expect(refusals.map((r) => r.statusCode)).toEqual([414, 400])
    expect(refusals.map((r) => rateHeaders(r).remaining)).toEqual([2, 1])
    expect(refusals.every((r) => rateHeaders(r).limit === 3)).toBe(true)
    expect(refusals.every((r) => rateHeaders(r).reset === T0 / 1000 + HOUR_S)).toBe(true)
    expect(refusals.every((r) => r.headers.ratelimit !== undefined)).toBe(true)
    // The two used quota: one request is left, then the limit answers.
    expect(rateHeaders(await get()).remaining).toBe(0)
    expect((await get()).statusCode).toBe(429)
    // Past the limit, the refusal keeps its own status and says nothing is left.
    const late = await get(tooLong)
    expect(late.statusCode).toBe(414)
    expect(rateHeaders(late).remaining).toBe(0)
    // A bad key, or none, is refused the same way, without headers and without a 401.
    for (const auth of [
      undefined,
      `Bearer ${key.plainKey.slice(0, -1)}${key.plainKey.endsWith('x') ? 'y' : 'x'}`,
    ]) {
      for (const path of [tooLong, malformed]) {
        const res = await request(ctx.app, path, auth)
        expect(res.statusCode).toBe(path === tooLong ? 414 : 400)
        expect(res.headers['x-ratelimit-limit']).toBeUndefined()
      }
    }
    // Paths outside the API are not the key's: refused, never counted.
    const outside = await request(ctx.app, `/healthz?q=${'a'.repeat(9000)}`, key.authorization)
    expect(outside.statusCode).toBe(414)
    expect(outside.headers['x-ratelimit-limit']).toBeUndefined()
  })

  it('counts Remaining down with each request and never below zero', async () => {
    const clock = fakeClock()
    const { get } = await setup({ perHour: 5, perSecond: 1000, clock: clock.now })
    const remaining: number[] = []
    for (let i = 0; i < 8; i++) remaining.push(rateHeaders(await get()).remaining)
    expect(remaining).toEqual([4, 3, 2, 1, 0, 0, 0, 0])
  })

  it('answers an exhausted key with 429 rate_limit_exceeded, Retry-After and a message to try later', async () => {
    const clock = fakeClock()
    const { get } = await setup({ perHour: 2, perSecond: 1000, clock: clock.now })
    await get()
    await get()
    clock.at(10_000)
    const res = await get()
    const body = expectError(res, 429, 'rate_limit_exceeded')
    expect(body.message).toMatch(/try again later/i)
    expect(res.headers['retry-after']).toBe(String(HOUR_S - 10))
    expect(rateHeaders(res)).toEqual({ limit: 2, remaining: 0, reset: T0 / 1000 + HOUR_S })
  })

  it('starts the hourly window at the first request and frees it 3600 s later', async () => {
    const clock = fakeClock()
    const { get } = await setup({ perHour: 3, perSecond: 1000, clock: clock.now })
    for (const ms of [0, 1000, 600_000]) {
      clock.at(ms)
      const res = await get()
      expect(res.statusCode).toBe(200)
      expect(rateHeaders(res).reset).toBe(T0 / 1000 + HOUR_S)
    }
    clock.at(HOUR_S * 1000 - 1)
    const late = await get()
    expectError(late, 429, 'rate_limit_exceeded')
    expect(late.headers['retry-after']).toBe('1')

    clock.at(HOUR_S * 1000)
    const fresh = await get()
    expectList(fresh)
    expect(rateHeaders(fresh)).toEqual({ limit: 3, remaining: 2, reset: T0 / 1000 + 2 * HOUR_S })
  })

  it('does not charge rejected requests against the quota', async () => {
    const clock = fakeClock()
    const { get } = await setup({ perHour: 5, perSecond: 2, clock: clock.now })
    const statuses: number[] = []
    const remaining: number[] = []
    const burst = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const res = await get()
        statuses.push(res.statusCode)
        remaining.push(rateHeaders(res).remaining)
      }
    }
    await burst(7)
    clock.at(1000)
    await burst(4)
    clock.at(2000)
    await burst(3)
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429, 200, 200, 429, 429, 200, 429, 429])
    expect(remaining).toEqual([4, 3, 3, 3, 3, 3, 3, 2, 1, 1, 1, 0, 0, 0])
  })

  it('gives a fresh key its whole quota after another key was exhausted', async () => {
    const clock = fakeClock()
    const { key, get } = await setup({ perHour: 2, perSecond: 1000, clock: clock.now })
    const sameUser = await buildApiKey(ctx.database.db, { userId: key.userId })
    await get()
    await get()
    expectError(await get(), 429, 'rate_limit_exceeded')
    const res = await get('/api/v1/forms', sameUser.authorization)
    expectList(res)
    expect(rateHeaders(res).remaining).toBe(1)
  })

  it('refuses a rate-limited key with 429 before saying the method or permission is wrong', async () => {
    const clock = fakeClock()
    const { key, get } = await setup({ perHour: 1, perSecond: 1000, clock: clock.now })
    await get()
    expectError(
      await request(ctx.app, '/api/v1/forms', key.authorization, { method: 'DELETE' }),
      429,
      'rate_limit_exceeded',
    )
    expectError(await get('/api/v1/nope'), 429, 'rate_limit_exceeded')
  })

  describe('the burst limit', () => {
    it('is rolling: 10 requests at 0.9 s leave none at 1.0 s, and free up at 1.9 s', async () => {
      const clock = fakeClock()
      const { get } = await setup({ perHour: 1000, perSecond: 10, clock: clock.now })
      clock.at(900)
      for (let i = 0; i < 10; i++) expectList(await get())
      expectError(await get(), 429, 'rate_limit_exceeded')

      // A window aligned on whole seconds would start afresh here.
      clock.at(1000)
      const refused = await get()
      expectError(refused, 429, 'rate_limit_exceeded')
      expect(refused.headers['retry-after']).toBe('1')
      clock.at(1899)
      expectError(await get(), 429, 'rate_limit_exceeded')

      clock.at(1900)
      for (let i = 0; i < 10; i++) expectList(await get())
      expectError(await get(), 429, 'rate_limit_exceeded')
    })

    it('never lets more than 10 through in any one-second interval', async () => {
      const clock = fakeClock()
      const { get } = await setup({ perHour: 1000, perSecond: 10, clock: clock.now })
      const allowedAt: number[] = []
      for (let ms = 0; ms < 5000; ms += 50) {
        clock.at(ms)
        if ((await get()).statusCode === 200) allowedAt.push(ms)
      }
      for (const start of allowedAt) {
        expect(allowedAt.filter((t) => t >= start && t < start + 1000).length).toBeLessThanOrEqual(10)
      }
      // Refused requests cost nothing, so the limit is also reached in every second.
      expect(allowedAt.length).toBe(50)
    })

    it('frees slots one by one as the oldest requests age past a second', async () => {
      const clock = fakeClock()
      const { get } = await setup({ perHour: 1000, perSecond: 10, clock: clock.now })
      for (let i = 0; i < 5; i++) expectList(await get())
      clock.at(500)
      for (let i = 0; i < 5; i++) expectList(await get())
      clock.at(999)
      expectError(await get(), 429, 'rate_limit_exceeded')
      clock.at(1000)
      for (let i = 0; i < 5; i++) expectList(await get())
      expectError(await get(), 429, 'rate_limit_exceeded')
    })

    it('is counted per key', async () => {
      const clock = fakeClock()
      const { get } = await setup({ perHour: 1000, perSecond: 3, clock: clock.now })
      const other = await buildApiKey(ctx.database.db)
      for (let i = 0; i < 3; i++) expectList(await get())
      expectError(await get(), 429, 'rate_limit_exceeded')
      for (let i = 0; i < 3; i++) expectList(await get('/api/v1/forms', other.authorization))
    })
  })

  describe('under concurrency, over real HTTP', () => {
    const listen = async () => {
      await ctx.app.listen({ port: 0, host: '127.0.0.1' })
      return `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
    }

    it('lets exactly 10 of 11 simultaneous requests with a fresh key through, with the default limits', async () => {
      await open()
      await buildForm(ctx.database.db)
      const key = await buildApiKey(ctx.database.db)
      const base = await listen()
      const responses = await Promise.all(
        Array.from({ length: 11 }, () =>
          fetch(`${base}/api/v1/forms`, { headers: { authorization: key.authorization } }),
        ),
      )
      const statuses = responses.map((r) => r.status).sort()
      expect(statuses).toEqual([...Array(10).fill(200), 429])
      const refused = responses.find((r) => r.status === 429)
      expect(await refused?.json()).toEqual({ error: 'rate_limit_exceeded', message: expect.any(String) })
      expect(refused?.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
      const remaining = responses
        .filter((r) => r.status === 200)
        .map((r) => Number(r.headers.get('x-ratelimit-remaining')))
        .sort((a, b) => a - b)
      expect(remaining).toEqual([990, 991, 992, 993, 994, 995, 996, 997, 998, 999])
    })

    it("never gives a RateLimit item a reset t beyond its policy window w, even at a window's first request", async () => {
      await open({ perHour: 1000, perSecond: 2 })
      const base = await listen()
      const windows = (policy: string) =>
        new Map([...policy.matchAll(/"(\w+)";q=\d+;w=(\d+)/g)].map((m) => [m[1], Number(m[2])]))
      const resets = (field: string) =>
        [...field.matchAll(/"(\w+)";r=\d+;t=(\d+)/g)].map((m) => [m[1], Number(m[2])] as const)
      // A fresh key's first request starts its hour; three of them, and a burst refusal.
      for (let i = 0; i < 3; i++) {
        const key = await buildApiKey(ctx.database.db)
        const responses = []
        for (let n = 0; n < 3; n++)
          responses.push(
            await fetch(`${base}/api/v1/forms`, { headers: { authorization: key.authorization } }),
          )
        for (const response of responses) {
          const w = windows(response.headers.get('ratelimit-policy') ?? '')
          const items = resets(response.headers.get('ratelimit') ?? '')
          expect(items.length).toBeGreaterThan(0)
          for (const [name, t] of items) expect(t).toBeLessThanOrEqual(w.get(name) ?? -1)
        }
      }
    })

    it('lets exactly the hourly limit through when many requests arrive at once', async () => {
      await open({ perHour: 5, perSecond: 1000 })
      const key = await buildApiKey(ctx.database.db)
      const base = await listen()
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${base}/api/v1/page-builder`, { headers: { authorization: key.authorization } }),
        ),
      )
      expect(responses.filter((r) => r.status === 200).length).toBe(5)
      expect(responses.filter((r) => r.status === 429).length).toBe(15)
    })
  })
})
