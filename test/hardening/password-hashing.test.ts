import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js'
import { createServices } from '../../src/services/index.js'
import { hashingLoad, PASSWORD_HASHING } from '../../src/services/passwords.js'
import { buildDashboardUser, PASSWORD } from '../admin/support.js'
import { createTestContext, type TestContext } from '../harness.js'
import { HttpBrowser, listenLocally, pageText } from './http-browser.js'

describe('password hashing under a burst of sign-ins', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let base: string

  beforeAll(async () => {
    ctx = await createTestContext()
    // As served in production (default throttle), behind a balancer so each sign-in has its own address.
    app = await buildApp({
      config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent', TRUST_PROXY: 'true' },
      services: createServices(ctx.database),
      limiter: new MemoryRateLimiter({ perHour: 1_000_000, perSecond: 1_000_000 }),
      database: ctx.database,
    })
    base = await listenLocally(app)
  })
  afterAll(async () => {
    await app.close()
    await ctx.close()
  })

  it('answers 40 simultaneous sign-ins each, never running more hashes at once than the limit', async () => {
    const users = await Promise.all(Array.from({ length: 40 }, () => buildDashboardUser(ctx.database.db)))
    const browsers = users.map((_, i) => new HttpBrowser(base, `10.2.0.${i + 1}`))
    for (const browser of browsers) await browser.request('/admin/login')
    const answers = await Promise.all(
      browsers.map((browser, i) =>
        browser.post('/admin/login', {
          email: users[i].email,
          password: i % 2 === 0 ? PASSWORD : 'not the password at all',
        }),
      ),
    )
    const outcomes = await Promise.all(
      answers.map(async (res) => ({
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        text: pageText(await res.text()),
      })),
    )
    const tally = new Map<number, number>()
    for (const { status } of outcomes) tally.set(status, (tally.get(status) ?? 0) + 1)
    console.info('40 simultaneous sign-ins:', Object.fromEntries(tally), hashingLoad())

    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.status === 503) {
        expect(Number(outcome.retryAfter)).toBeGreaterThan(0)
        expect(outcome.text).toContain('Too many sign-ins are being checked right now')
      } else {
        expect(outcome.status).toBe(i % 2 === 0 ? 303 : 401)
      }
    }
    expect(hashingLoad().peakRunning).toBeLessThanOrEqual(PASSWORD_HASHING.concurrency)
    expect(hashingLoad().peakRunning).toBeGreaterThan(0)
    // Two hashing plus a full queue waiting is all a burst gets checked; the rest is told to come back.
    expect(outcomes.filter((o) => o.status !== 503).length).toBeLessThanOrEqual(
      PASSWORD_HASHING.concurrency + PASSWORD_HASHING.maxQueue,
    )
    expect(hashingLoad()).toMatchObject({ running: 0, waiting: 0 })

    // Once the burst has passed, everyone gets in.
    const late = new HttpBrowser(base, '10.2.1.1')
    expect((await late.signIn(users[0].email, PASSWORD)).status).toBe(303)
  }, 120_000)
})
