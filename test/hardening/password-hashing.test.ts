import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js'
import { createServices } from '../../src/services/index.js'
import {
  hashingLoad,
  hashPassword,
  PASSWORD_COST,
  PASSWORD_HASHING,
  setPasswordCostForTests,
  withHashingSlot,
} from '../../src/services/passwords.js'
import { buildSignInUser } from '../admin/low-cost-password.js'
import { buildDashboardUser, PASSWORD } from '../admin/support.js'
import { runCliProcess } from '../cli/run-cli.js'
import { createTestContext, type TestContext } from '../harness.js'
import { HttpBrowser, listenLocally, pageText } from './http-browser.js'

/**
 * A dashboard as served in production (default throttle), behind a balancer so that each sign-in
 * can come from its own address.
 */
async function servedBehindBalancer(): Promise<{ ctx: TestContext; app: FastifyInstance; base: string }> {
  const ctx = await createTestContext()
  const app = await buildApp({
    config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent', TRUST_PROXY: 'true' },
    services: createServices(ctx.database),
    limiter: new MemoryRateLimiter({ perHour: 1_000_000, perSecond: 1_000_000 }),
    database: ctx.database,
  })
  return { ctx, app, base: await listenLocally(app) }
}

// Limits under load are only real at the product's own cost (the suite otherwise hashes at a low one:
// test/password-cost.ts); each test file starts from the suite's, so this one needs no restoring.
setPasswordCostForTests(PASSWORD_COST)

describe('the cost of a new password', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  it("is OWASP's scrypt cost (N=2^17, r=8, p=1) in a process of the product, and checks against it work", async () => {
    const email = 'grace@example.com'
    await ctx.services.users.createUser({ email, role: 'editor' })
    // `bin/lectern` is the product as it runs: nothing in it lowers the cost.
    const res = await runCliProcess(['users', 'set-password', email], {
      databaseUrl: ctx.databaseUrl,
      input: 'a long enough passphrase\n',
    })
    expect(res.code, res.stderr).toBe(0)
    const { rows } = await sql<{
      password_hash: string
    }>`select password_hash from users where email = ${email}`.execute(ctx.database.db)
    expect(rows[0]?.password_hash.split('$').slice(0, 4)).toEqual(['scrypt', '131072', '8', '1'])
    expect(await ctx.services.users.checkPassword(email, 'a long enough passphrase')).toBe(true)
    expect(await ctx.services.users.checkPassword(email, 'not the passphrase at all')).toBe(false)
  })
})

/** `PASSWORD` hashed once at full cost: every user of these tests signs in with it. */
let fullCostHash: Promise<string> | undefined
const fullCostUser = (ctx: TestContext, input: Parameters<typeof buildDashboardUser>[1] = {}) => {
  fullCostHash ??= hashPassword(PASSWORD)
  return fullCostHash.then((passwordHash) => buildDashboardUser(ctx.database.db, { ...input, passwordHash }))
}

describe('password hashing under a burst of sign-ins', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let base: string

  beforeAll(async () => {
    const served = await servedBehindBalancer()
    ctx = served.ctx
    app = served.app
    base = served.base
  })
  afterAll(async () => {
    await app.close()
    await ctx.close()
  })

  it('answers 40 simultaneous sign-ins each, never running more hashes at once than the limit', async () => {
    const users = await Promise.all(Array.from({ length: 40 }, () => fullCostUser(ctx)))
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

/**
 * Current-password checks of signed-in users against everyone's sign-in. The test holds both
 * hashing slots while requests arrive, so that what waits where is known; then lets them go.
 */
describe('password hashing when signed-in users flood the current-password check', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let base: string
  let address = 0
  const browserAt = () => new HttpBrowser(base, `10.4.${Math.floor(++address / 250)}.${address % 250}`)

  beforeAll(async () => {
    const served = await servedBehindBalancer()
    ctx = served.ctx
    app = served.app
    base = served.base
  })
  afterAll(async () => {
    await app.close()
    await ctx.close()
  })

  /** Takes both hashing slots until `release` is called. */
  const holdSlots = () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const done = Promise.all(
      Array.from({ length: PASSWORD_HASHING.concurrency }, () => withHashingSlot({}, () => held)),
    )
    return { release, done }
  }
  /** Resolves once `settled()` holds, checking after each turn of the event loop. */
  const until = async (settled: () => boolean) => {
    while (!settled()) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const signedIn = async (email: string) => {
    const browser = browserAt()
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303)
    await browser.request('/admin/account')
    return browser
  }
  const wrongCheck = (browser: HttpBrowser) =>
    browser.post('/admin/account/password', {
      current: 'not the password at all',
      password: 'a brand new passphrase',
      confirm: 'a brand new passphrase',
    })

  /** Sends `requests` while the slots are held, then an admin's sign-in; returns its answer once all are answered. */
  const signInDuring = async (requests: (() => Promise<Response>)[]) => {
    const admin = await fullCostUser(ctx, { role: 'global_admin' })
    const adminBrowser = browserAt()
    await adminBrowser.request('/admin/login')
    // From an idle queue (an earlier sign-in's decoy hash may still run), so both slots are taken at once.
    await until(() => hashingLoad().running + hashingLoad().waiting === 0)
    const slots = holdSlots()
    let answered = 0
    const pending = requests.map((send) =>
      send().then(async (res) => {
        answered += 1
        return { status: res.status, retryAfter: res.headers.get('retry-after') }
      }),
    )
    // Every request has been answered or waits for a slot.
    await until(() => answered + hashingLoad().waiting >= requests.length)
    const waitingBefore = hashingLoad().waiting
    let signInAnswered = false
    let stillWaitingThen = 0
    const signIn = adminBrowser
      .post('/admin/login', { email: admin.email, password: PASSWORD })
      .then((res) => {
        signInAnswered = true
        stillWaitingThen = hashingLoad().waiting
        return res
      })
    await until(() => signInAnswered || hashingLoad().waiting > waitingBefore)
    slots.release()
    await slots.done
    const [answers, signedIn] = await Promise.all([Promise.all(pending), signIn])
    expect(hashingLoad()).toMatchObject({ running: 0, waiting: 0 })
    return { answers, signedIn, waitingBefore, stillWaitingThen }
  }

  it("signs an admin in while one viewer sends 20 wrong current passwords at once, refusing the viewer's extra checks", async () => {
    const viewer = await fullCostUser(ctx, { role: 'viewer' })
    const browser = await signedIn(viewer.email)
    const { answers, signedIn: admin } = await signInDuring(
      Array.from({ length: 20 }, () => () => wrongCheck(browser)),
    )
    expect(admin.status).toBe(303)
    // One check of this user at a time: the others were refused at once, or ended the guessing session.
    for (const answer of answers) {
      expect([303, 422, 503]).toContain(answer.status)
      if (answer.status === 503) expect(Number(answer.retryAfter)).toBeGreaterThan(0)
    }
    expect(answers.filter((a) => a.status === 422).length).toBeLessThanOrEqual(
      PASSWORD_HASHING.maxChecksPerUser,
    )
  }, 120_000)

  it('signs an admin in while many signed-in users each send a wrong current password, without waiting for all of them', async () => {
    // Signed in against a low-cost hash, then given a production-cost one: their flood of checks
    // must take as long as real users' would, so that checks still wait when the sign-in is answered.
    const users = await Promise.all(
      Array.from({ length: PASSWORD_HASHING.maxQueue + 2 }, () =>
        buildSignInUser(ctx.database.db, { role: 'viewer' }),
      ),
    )
    const viewers = []
    for (const user of users) viewers.push(await signedIn(user.email))
    await ctx.database.db
      .updateTable('users')
      .set({ password_hash: await hashPassword(PASSWORD) })
      .where(
        'id',
        'in',
        users.map((user) => user.id),
      )
      .execute()
    const {
      answers,
      signedIn: admin,
      stillWaitingThen,
    } = await signInDuring(viewers.map((browser) => () => wrongCheck(browser)))
    expect(admin.status).toBe(303)
    // The sign-in took its turn at a slot while checks still waited behind it.
    expect(stillWaitingThen).toBeGreaterThan(0)
    // The checks' own line is bounded: beyond it, a check is told to come back.
    expect(answers.filter((a) => a.status === 422)).toHaveLength(PASSWORD_HASHING.maxQueue)
    expect(answers.filter((a) => a.status === 503)).toHaveLength(2)
  }, 240_000)
})
