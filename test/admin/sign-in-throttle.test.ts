import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import {
  buildAppWithSessions,
  buildDashboardUser,
  DashboardClient,
  manualClock,
  PASSWORD,
  textOf,
} from './support.js'

const LIMITS = { maxFailuresPerAccount: 3, maxFailuresPerIp: 5, throttleWindowMs: 15 * 60_000 }
const WRONG = 'definitely the wrong password'

describe('sign-in brute-force limits', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let otherInstance: FastifyInstance
  const clock = manualClock()
  let lastIp = 0
  /** A client from an address no other test uses. */
  const freshClient = (instance = app) =>
    new DashboardClient(instance, { remoteAddress: `10.0.${Math.floor(++lastIp / 250)}.${lastIp % 250}` })
  const signIn = async (client: DashboardClient, email: string, password: string) => {
    await client.get('/admin/login')
    return client.post('/admin/login', { email, password })
  }

  beforeAll(async () => {
    ctx = await createTestContext()
    app = await buildAppWithSessions(ctx, { clock: clock.now, ...LIMITS })
    // A second instance on the same database: limits must hold across instances.
    otherInstance = await buildAppWithSessions(ctx, { clock: clock.now, ...LIMITS })
  })
  afterAll(async () => {
    await app.close()
    await otherInstance.close()
    await ctx.close()
  })

  it('locks an account after too many failures: even the right password is refused, from any address', async () => {
    const user = await buildDashboardUser(ctx.database.db)
    for (let i = 0; i < LIMITS.maxFailuresPerAccount; i++)
      expect((await signIn(freshClient(), user.email, WRONG)).statusCode).toBe(401)

    const locked = await signIn(freshClient(), user.email, PASSWORD)
    expect(locked.statusCode).toBe(429)
    expect(textOf(locked)).toContain('Too many failed sign-in attempts')
    expect(textOf(locked)).toContain('try again in 15 minutes')
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(14 * 60)
    expect(locked.cookies.find((c) => c.name === 'lectern_session')).toBeUndefined()

    const other = await buildDashboardUser(ctx.database.db)
    expect((await signIn(freshClient(), other.email, PASSWORD)).statusCode).toBe(303)
  })

  it('lifts the lock when the failures leave the window, however often it was tried meanwhile', async () => {
    const user = await buildDashboardUser(ctx.database.db)
    for (let i = 0; i < LIMITS.maxFailuresPerAccount; i++) await signIn(freshClient(), user.email, WRONG)
    for (let i = 0; i < 10; i++) {
      clock.advance(60_000)
      expect((await signIn(freshClient(), user.email, WRONG)).statusCode).toBe(429)
    }
    clock.advance(LIMITS.throttleWindowMs - 10 * 60_000)
    expect((await signIn(freshClient(), user.email, PASSWORD)).statusCode).toBe(303)
  })

  it('counts the failures of an account across instances', async () => {
    const user = await buildDashboardUser(ctx.database.db)
    await signIn(freshClient(app), user.email, WRONG)
    await signIn(freshClient(otherInstance), user.email, WRONG)
    await signIn(freshClient(app), user.email, WRONG)
    expect((await signIn(freshClient(otherInstance), user.email, PASSWORD)).statusCode).toBe(429)
  })

  it('counts failures for an email that belongs to nobody the same way', async () => {
    for (let i = 0; i < LIMITS.maxFailuresPerAccount; i++)
      expect((await signIn(freshClient(), 'ghost@example.com', WRONG)).statusCode).toBe(401)
    expect((await signIn(freshClient(), 'ghost@example.com', WRONG)).statusCode).toBe(429)
  })

  it('starts counting afresh after a successful sign-in', async () => {
    const user = await buildDashboardUser(ctx.database.db)
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < LIMITS.maxFailuresPerAccount - 1; i++)
        expect((await signIn(freshClient(), user.email, WRONG)).statusCode).toBe(401)
      expect((await signIn(freshClient(), user.email, PASSWORD)).statusCode).toBe(303)
    }
  })

  it('locks an address that fails for many accounts, for every account, while other addresses sign in', async () => {
    const attacker = freshClient()
    for (let i = 0; i < LIMITS.maxFailuresPerIp; i++)
      expect((await signIn(attacker, `guess${i}@example.com`, WRONG)).statusCode).toBe(401)
    const user = await buildDashboardUser(ctx.database.db)
    const refused = await signIn(attacker, user.email, PASSWORD)
    expect(refused.statusCode).toBe(429)
    expect((await signIn(freshClient(), user.email, PASSWORD)).statusCode).toBe(303)
    clock.advance(LIMITS.throttleWindowMs)
    expect((await signIn(attacker, user.email, PASSWORD)).statusCode).toBe(303)
  })

  it('checks at most the allowed number of passwords when guesses arrive all at once', async () => {
    const user = await buildDashboardUser(ctx.database.db)
    const clients = Array.from({ length: 12 }, () => freshClient())
    for (const client of clients) await client.get('/admin/login')
    const answers = await Promise.all(
      clients.map((client) => client.post('/admin/login', { email: user.email, password: WRONG })),
    )
    const statuses = answers.map((res) => res.statusCode)
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(
      LIMITS.maxFailuresPerAccount,
    )
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true)
  })

  it('fails closed: when the attempts cannot be read or written, nobody signs in', async () => {
    const user = await buildDashboardUser(ctx.database.db)
    await sql`alter table login_attempts rename to login_attempts_moved`.execute(ctx.database.db)
    try {
      const res = await signIn(freshClient(), user.email, PASSWORD)
      expect(res.statusCode).toBe(503)
      expect(textOf(res)).toContain('Signing in is temporarily unavailable')
      expect(res.cookies.find((c) => c.name === 'lectern_session')).toBeUndefined()
      const sessions = await ctx.database.db
        .selectFrom('admin_sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .execute()
      expect(sessions).toHaveLength(0)
    } finally {
      await sql`alter table login_attempts_moved rename to login_attempts`.execute(ctx.database.db)
    }
    expect((await signIn(freshClient(), user.email, PASSWORD)).statusCode).toBe(303)
  })
})
