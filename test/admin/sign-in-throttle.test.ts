import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js'
import { createServices } from '../../src/services/index.js'
import type { SessionOptions } from '../../src/services/sessions.js'
import { runCli } from '../cli/run-cli.js'
import { HttpBrowser, listenLocally, pageText } from '../hardening/http-browser.js'
import { createTestContext, type TestContext } from '../harness.js'
import { buildSignInUser } from './low-cost-password.js'
import { manualClock, PASSWORD } from './support.js'

const LIMITS = {
  maxFailuresPerAddressAndAccount: 3,
  maxFailuresPerAddress: 8,
  accountSlowdownAfter: 4,
  accountDelayMs: 1_000,
  accountDelayMaxMs: 8_000,
  throttleWindowMs: 15 * 60_000,
}
const WRONG = 'definitely the wrong password'

/**
 * The sign-in throttle through real HTTP sign-ins, against two instances on one database (behind a
 * balancer, so the client address comes from `X-Forwarded-For`). Slowdowns are recorded instead of
 * waited out, so the tests show who was slowed without depending on time; users' passwords are
 * stored at low scrypt cost, as the throttle around the check is what is tested.
 */
describe('sign-in throttling', () => {
  let ctx: TestContext
  const apps: FastifyInstance[] = []
  let one: string
  let other: string
  const clock = manualClock()
  const delays: number[] = []
  let lastAddress = 0
  /** A browser at an address no other test uses. */
  const fromNewAddress = (base = one) =>
    new HttpBrowser(base, `10.1.${Math.floor(++lastAddress / 250)}.${lastAddress % 250}`)

  async function instance(sessions: SessionOptions): Promise<string> {
    const app = await buildApp({
      config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent', TRUST_PROXY: 'true' },
      services: createServices(ctx.database, { sessions }),
      limiter: new MemoryRateLimiter({ perHour: 1_000_000, perSecond: 1_000_000 }),
      database: ctx.database,
    })
    apps.push(app)
    return listenLocally(app)
  }

  beforeAll(async () => {
    ctx = await createTestContext()
    const sessions = {
      clock: clock.now,
      ...LIMITS,
      sleep: async (ms: number) => {
        delays.push(ms)
      },
    }
    one = await instance(sessions)
    // A second instance on the same database: the throttle must hold across instances.
    other = await instance(sessions)
  })
  afterAll(async () => {
    for (const app of apps) await app.close()
    await ctx.close()
  })

  it('refuses an address that failed too often for an account, while the owner signs in from another', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const attacker = fromNewAddress()
    for (let i = 0; i < LIMITS.maxFailuresPerAddressAndAccount; i++)
      expect((await attacker.signIn(user.email, WRONG)).status).toBe(401)

    const locked = await attacker.signIn(user.email, PASSWORD)
    expect(locked.status).toBe(429)
    const text = pageText(await locked.text())
    expect(text).toContain('Too many failed sign-in attempts')
    expect(text).toContain('try again in 15 minutes')
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(14 * 60)
    expect(attacker.cookies.has('lectern_session')).toBe(false)

    const owner = fromNewAddress()
    expect((await owner.signIn(user.email, PASSWORD)).status).toBe(303)
    expect(owner.cookies.has('lectern_session')).toBe(true)
  })

  it('never locks an account: after failures from many addresses the right password still signs in, slowed down', async () => {
    const user = await buildSignInUser(ctx.database.db)
    delays.length = 0
    for (let i = 0; i < 12; i++) {
      const status = (await fromNewAddress(i % 2 === 0 ? one : other).signIn(user.email, WRONG)).status
      expect(status).toBe(401)
    }
    // Each attempt past the first few waited longer than the one before, up to the cap.
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000, 8_000, 8_000])
    delays.length = 0
    const owner = fromNewAddress(other)
    expect((await owner.signIn(user.email, PASSWORD)).status).toBe(303)
    expect(delays).toEqual([8_000])
  })

  it('lifts an address lock when the failures leave the window, however often it was tried meanwhile', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const attacker = fromNewAddress()
    for (let i = 0; i < LIMITS.maxFailuresPerAddressAndAccount; i++) await attacker.signIn(user.email, WRONG)
    for (let i = 0; i < 10; i++) {
      clock.advance(60_000)
      expect((await attacker.signIn(user.email, WRONG)).status).toBe(429)
    }
    clock.advance(LIMITS.throttleWindowMs - 10 * 60_000)
    expect((await attacker.signIn(user.email, PASSWORD)).status).toBe(303)
  })

  it('counts the failures of an address across instances', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const { address } = fromNewAddress()
    const viaOne = new HttpBrowser(one, address)
    const viaOther = new HttpBrowser(other, address)
    await viaOne.signIn(user.email, WRONG)
    await viaOther.signIn(user.email, WRONG)
    await viaOne.signIn(user.email, WRONG)
    expect((await viaOther.signIn(user.email, PASSWORD)).status).toBe(429)
  })

  it('counts failures for an email that belongs to nobody the same way', async () => {
    const attacker = fromNewAddress()
    for (let i = 0; i < LIMITS.maxFailuresPerAddressAndAccount; i++)
      expect((await attacker.signIn('ghost@example.com', WRONG)).status).toBe(401)
    expect((await attacker.signIn('ghost@example.com', WRONG)).status).toBe(429)
  })

  it("forgives the owner's own typos once they sign in", async () => {
    const user = await buildSignInUser(ctx.database.db)
    const owner = fromNewAddress()
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < LIMITS.maxFailuresPerAddressAndAccount - 1; i++)
        expect((await owner.signIn(user.email, WRONG)).status).toBe(401)
      expect((await owner.signIn(user.email, PASSWORD)).status).toBe(303)
      await owner.request('/admin')
      expect((await owner.post('/admin/logout', {})).status).toBe(303)
    }
  })

  it('refuses an address that fails for many accounts, for every account, while other addresses sign in', async () => {
    // Real accounts, each failed once: nobody's emails are counted alike (tested above) but cost a full hash.
    const guessed = await Promise.all(
      Array.from({ length: LIMITS.maxFailuresPerAddress }, () => buildSignInUser(ctx.database.db)),
    )
    const attacker = fromNewAddress()
    for (const { email } of guessed) expect((await attacker.signIn(email, WRONG)).status).toBe(401)
    const user = await buildSignInUser(ctx.database.db)
    expect((await attacker.signIn(user.email, PASSWORD)).status).toBe(429)
    expect((await fromNewAddress().signIn(user.email, PASSWORD)).status).toBe(303)
    clock.advance(LIMITS.throttleWindowMs)
    expect((await attacker.signIn(user.email, PASSWORD)).status).toBe(303)
  })

  it('checks at most the allowed number of passwords when guesses from one address arrive all at once', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const attacker = fromNewAddress()
    await attacker.request('/admin/login')
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => attacker.post('/admin/login', { email: user.email, password: WRONG })),
    )
    const statuses = answers.map((res) => res.status)
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(
      LIMITS.maxFailuresPerAddressAndAccount,
    )
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true)
  })

  it('is cleared for an email by `lectern users unlock`, from every address', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const attackers = [fromNewAddress(), fromNewAddress()]
    for (const attacker of attackers)
      for (let i = 0; i < LIMITS.maxFailuresPerAddressAndAccount; i++)
        await attacker.signIn(user.email, WRONG)
    expect((await attackers[0].signIn(user.email, PASSWORD)).status).toBe(429)

    const unlocked = await runCli(['users', 'unlock', user.email.toUpperCase()], {
      databaseUrl: ctx.databaseUrl,
    })
    // The one line on stderr says which database the command wrote to.
    expect(unlocked.stderr).toMatch(/^Wrote to \S+\n$/)
    expect(unlocked.code).toBe(0)
    expect(unlocked.stdout).toContain(`Cleared the sign-in throttle of ${user.email} (6 failed attempts)`)
    delays.length = 0
    expect((await attackers[1].signIn(user.email, PASSWORD)).status).toBe(303)
    expect(delays).toEqual([])
  })

  it('fails closed: when the attempts cannot be read or written, nobody signs in', async () => {
    const user = await buildSignInUser(ctx.database.db)
    await sql`alter table login_attempts rename to login_attempts_moved`.execute(ctx.database.db)
    try {
      const browser = fromNewAddress()
      const res = await browser.signIn(user.email, PASSWORD)
      expect(res.status).toBe(503)
      expect(pageText(await res.text())).toContain('Signing in is temporarily unavailable')
      expect(browser.cookies.has('lectern_session')).toBe(false)
      const sessions = await ctx.database.db
        .selectFrom('admin_sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .execute()
      expect(sessions).toHaveLength(0)
    } finally {
      await sql`alter table login_attempts_moved rename to login_attempts`.execute(ctx.database.db)
    }
    expect((await fromNewAddress().signIn(user.email, PASSWORD)).status).toBe(303)
  })
})

/**
 * The current-password check of the account page, throttled like sign-in with the session in the
 * place of the address, through real HTTP on two instances of one database.
 */
describe('current-password throttling', () => {
  let ctx: TestContext
  const apps: FastifyInstance[] = []
  let one: string
  let other: string
  const delays: number[] = []
  const MAX = 3
  const NEW_PASSWORD = 'a brand new passphrase'

  beforeAll(async () => {
    ctx = await createTestContext()
    const sessions: SessionOptions = {
      maxPasswordCheckFailuresPerSession: MAX,
      accountSlowdownAfter: 4,
      accountDelayMs: 1_000,
      accountDelayMaxMs: 8_000,
      sleep: async (ms: number) => {
        delays.push(ms)
      },
    }
    for (let i = 0; i < 2; i++) {
      const app = await buildApp({
        config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent', TRUST_PROXY: 'true' },
        services: createServices(ctx.database, { sessions }),
        limiter: new MemoryRateLimiter({ perHour: 1_000_000, perSecond: 1_000_000 }),
        database: ctx.database,
      })
      apps.push(app)
    }
    one = await listenLocally(apps[0])
    other = await listenLocally(apps[1])
  })
  afterAll(async () => {
    for (const app of apps) await app.close()
    await ctx.close()
  })

  const signedIn = async (email: string, base = one, address = '10.3.0.1') => {
    const browser = new HttpBrowser(base, address)
    expect((await browser.signIn(email, PASSWORD)).status).toBe(303)
    await browser.request('/admin/account')
    return browser
  }
  const change = (browser: HttpBrowser, current: string) =>
    browser.post('/admin/account/password', { current, password: NEW_PASSWORD, confirm: NEW_PASSWORD })
  const audited = async (action: string, email: string) =>
    (await ctx.services.audit.list({ action }, { page: 1, pageSize: 100 })).items.filter(
      (entry) => entry.target === email,
    )

  it('ends a session that gives too many wrong current passwords, saying why, and audits it', async () => {
    const user = await buildSignInUser(ctx.database.db, { role: 'viewer' })
    const stolen = await signedIn(user.email)
    for (let i = 0; i < MAX; i++) {
      const res = await change(stolen, WRONG)
      expect(res.status).toBe(422)
      expect(pageText(await res.text())).toContain('The current password is not right')
    }
    // The next answer is not checked, even the right one: the session ends.
    const ended = await change(stolen, PASSWORD)
    expect(ended.status).toBe(303)
    expect(ended.headers.get('location')).toBe('/admin/login?notice=password-checks')
    expect(stolen.cookies.has('lectern_session')).toBe(false)
    const login = await stolen.request('/admin/login?notice=password-checks')
    expect(pageText(await login.text())).toContain('signed out after too many wrong current passwords')
    const sessions = await ctx.database.db
      .selectFrom('admin_sessions')
      .select('id')
      .where('user_id', '=', user.id)
      .execute()
    expect(sessions).toEqual([])
    expect(await audited('session.password_check_failed', user.email)).toHaveLength(MAX)
    expect(await audited('session.ended', user.email)).toMatchObject([
      { actor: user.email, detail: { ip: '10.3.0.1', reason: 'too_many_wrong_passwords' } },
    ])
    expect(await audited('user.password_changed', user.email)).toEqual([])
  })

  it('never keeps the owner from signing in or from changing the password in a new session', async () => {
    const user = await buildSignInUser(ctx.database.db, { role: 'editor' })
    const stolen = await signedIn(user.email, one, '10.3.1.1')
    for (let i = 0; i <= MAX; i++) await change(stolen, WRONG)
    expect(stolen.cookies.has('lectern_session')).toBe(false)

    // Signing in is not slowed by them, from the same address or another, on either instance.
    delays.length = 0
    const owner = await signedIn(user.email, other, '10.3.1.1')
    expect(delays).toEqual([])
    // The ended session's wrong answers stay below the user's slowdown: the owner's check runs at once.
    const res = await change(owner, PASSWORD)
    expect(res.status).toBe(303)
    expect(res.headers.get('location')).toBe('/admin/account')
    expect(delays).toHaveLength(0)
    expect(await audited('user.password_changed', user.email)).toHaveLength(1)
  })

  it('slows every check of a user whose sessions gave many wrong answers, across instances', async () => {
    const user = await buildSignInUser(ctx.database.db, { role: 'viewer' })
    const sessions = await Promise.all([one, other, one].map((base) => signedIn(user.email, base)))
    delays.length = 0
    for (const browser of sessions) for (let i = 0; i < 2; i++) await change(browser, WRONG)
    // Four failures of the user before the fifth check, then each waits longer than the one before.
    expect(delays).toEqual([1_000, 2_000])
    delays.length = 0
    const res = await change(sessions[2], PASSWORD)
    expect(res.status).toBe(303)
    expect(delays).toEqual([4_000])
  })
})
