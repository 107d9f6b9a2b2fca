import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { randomBase62 } from '../../src/ids.js'
import { FallbackRateLimiter } from '../../src/ratelimit/fallback.js'
import type { RateLimitDecision } from '../../src/ratelimit/limiter.js'
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js'
import { RedisRateLimiter } from '../../src/ratelimit/redis.js'
import { KEY_PREFIX } from '../../src/services/keys.js'
import { buildApiKey, buildForm, buildUser } from '../factories.js'
import { createTestContext, TEST_DIALECT, TEST_REDIS_URL, type TestContext } from '../harness.js'
import { request } from '../security-suite.js'

const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining'])

/**
 * With Redis, a key this instance has seen valid is counted while it is looked up; these tests
 * prove that doing both at once refuses what a lookup refuses, and charges nothing for it. On
 * SQLite (in-memory limits) the same behaviour holds with the two done in turn.
 */

/** The charge of an allowed request, which `refund` takes back. */
function chargeOf(decision: RateLimitDecision) {
  if (!decision.charge) throw new Error('the request was not charged')
  return decision.charge
}

describe('counting a request while its key is looked up', () => {
  let ctx: TestContext
  afterEach(async () => {
    await ctx?.close()
  })

  const setup = async () => {
    ctx = await createTestContext({ perHour: 100, perSecond: 1000 })
    await buildForm(ctx.database.db)
    const key = await buildApiKey(ctx.database.db)
    return { key, get: (auth = key.authorization) => request(ctx.app, '/api/v1/forms', auth) }
  }

  it('refuses a key deactivated since its last request on the very next one, and charges nothing for it', async () => {
    const { key, get } = await setup()
    expect(remaining(await get())).toBe(99)
    expect(remaining(await get())).toBe(98)
    await ctx.services.keys.deactivateApiKey(key.id)
    for (let i = 0; i < 5; i++) expect((await get()).json()).toMatchObject({ error: 'api_key_inactive' })
    await ctx.services.keys.activateApiKey(key.id)
    expect(remaining(await get())).toBe(97)
  })

  it('refuses a key revoked since its last request on the very next one, for every request of a burst', async () => {
    const { key, get } = await setup()
    expect((await get()).statusCode).toBe(200)
    await ctx.services.keys.revokeApiKey(key.id)
    const burst = await Promise.all(Array.from({ length: 8 }, () => get()))
    expect(burst.map((res) => res.json().error)).toEqual(Array(8).fill('invalid_api_key'))
  })

  it('narrows a key whose creator was demoted since its last request on the very next one', async () => {
    const { key } = await setup()
    const submissions = async () => {
      const form = await ctx.database.db.selectFrom('forms').select('id').executeTakeFirstOrThrow()
      return request(ctx.app, `/api/v1/forms/${form.id}/submissions`, key.authorization)
    }
    expect((await submissions()).statusCode).toBe(200)
    await buildUser(ctx.database.db, { role: 'global_admin' })
    await ctx.services.users.setRole({ id: key.userId }, 'editor')
    const refused = await submissions()
    expect(refused.json()).toMatchObject({ error: 'insufficient_permissions' })
    // A permission refusal is a request of a valid key: it counts, as it always has.
    expect(remaining(refused)).toBe(98)
  })

  it.runIf(TEST_DIALECT === 'postgres')(
    'never writes anything to Redis for a token that is not a valid key',
    async () => {
      const { get } = await setup()
      const limiter = ctx.limiter as RedisRateLimiter
      const redis = new Redis(TEST_REDIS_URL)
      try {
        for (let i = 0; i < 20; i++) {
          const res = await get(`Bearer ${KEY_PREFIX}${randomBase62(40)}`)
          expect(res.json()).toMatchObject({ error: 'invalid_api_key' })
        }
        expect(await redis.keys(`${limiter.prefix}*`)).toEqual([])
      } finally {
        redis.disconnect()
      }
    },
  )
})

describe('taking a request back in Redis', () => {
  const redis = () => new Redis(TEST_REDIS_URL)
  const opened: { disconnect(): void }[] = []
  afterEach(() => {
    for (const client of opened.splice(0)) client.disconnect()
  })
  const limiterWith = (perHour: number, perSecond: number) => {
    const client = redis()
    opened.push(client)
    return new RedisRateLimiter(client, { perHour, perSecond }, `lectern-test:${randomBase62(10)}:`)
  }

  it.runIf(TEST_DIALECT === 'postgres')(
    'gives back the hourly count and the place in the burst log',
    async () => {
      const limiter = limiterWith(10, 2)
      const first = await limiter.consume('key_a')
      const second = await limiter.consume('key_a')
      expect(second.remaining).toBe(8)
      expect((await limiter.consume('key_a')).allowed).toBe(false)
      await limiter.refund('key_a', chargeOf(second))
      const again = await limiter.consume('key_a')
      expect(again).toMatchObject({ allowed: true, remaining: 8 })
      expect((await limiter.consume('key_a')).allowed).toBe(false)
      expect(first.charge?.store).toBe('redis')
    },
  )

  it.runIf(TEST_DIALECT === 'postgres')(
    'creates no keys when the request taken back has expired from Redis',
    async () => {
      const limiter = limiterWith(10, 2)
      const client = redis()
      opened.push(client)
      await limiter.refund('key_gone', { store: 'redis', at: Date.now(), windowStart: Date.now() })
      expect(await client.keys(`${limiter.prefix}*`)).toEqual([])
    },
  )

  it.runIf(TEST_DIALECT === 'postgres')(
    'does not charge a refunded request again through the floor the fallback sends',
    async () => {
      const client = redis()
      opened.push(client)
      const limits = { perHour: 10, perSecond: 100 }
      const limiter = new FallbackRateLimiter(
        new RedisRateLimiter(client, limits, `lectern-test:${randomBase62(10)}:`),
        new MemoryRateLimiter(limits),
        { probeShared: () => client.ping(), onModeChange: () => {} },
      )
      await limiter.consume('key_a')
      const second = await limiter.consume('key_a')
      expect(second.remaining).toBe(8)
      await limiter.refund('key_a', chargeOf(second))
      expect((await limiter.consume('key_a')).remaining).toBe(8)
    },
  )
})
