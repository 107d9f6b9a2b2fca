import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashingLoad, PASSWORD_HASHING, withHashingSlot } from '../../src/services/passwords.js'
import { runCliProcess } from '../cli/run-cli.js'
import { HttpBrowser, listenLocally, pageText } from '../hardening/http-browser.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { buildSignInUser, signedInLowCost } from './low-cost-password.js'
import { DashboardClient, PASSWORD, textOf } from './support.js'

const NEW_PASSWORD = 'a brand new passphrase'

const sessionsOf = async (ctx: TestContext, userId: string) =>
  (await ctx.database.db.selectFrom('admin_sessions').select('id').where('user_id', '=', userId).execute())
    .length

// Users start with a password stored at low scrypt cost; each change, and each sign-in with a
// changed password, hashes at production cost: generous time on a busy machine.
describe('Passwords in the dashboard', { timeout: 120_000 }, () => {
  let ctx: TestContext
  let app: FastifyInstance

  const changes = async (email: string) =>
    (
      await ctx.services.audit.list({ action: 'user.password_changed' }, { page: 1, pageSize: 100 })
    ).items.filter((entry) => entry.target === email)

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
  })
  afterAll(() => ctx.close())

  it('changes your own password with the current one, ends your other sessions and keeps this browser signed in', async () => {
    const { client, user } = await signedInLowCost(app, ctx.database.db, 'viewer')
    const elsewhere = new DashboardClient(app)
    expect((await elsewhere.signIn(user.email)).statusCode).toBe(303)
    expect(await sessionsOf(ctx, user.id)).toBe(2)

    await client.get('/admin/account')
    const res = await client.post('/admin/account/password', {
      current: PASSWORD,
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/admin/account')
    const page = await client.get('/admin/account')
    expect(page.statusCode).toBe(200)
    expect(textOf(page)).toContain('Your password is changed')
    expect(await sessionsOf(ctx, user.id)).toBe(1)
    // The other browser is signed out at once.
    expect((await elsewhere.get('/admin')).statusCode).toBe(303)

    expect((await new DashboardClient(app).signIn(user.email, PASSWORD)).statusCode).toBe(401)
    expect((await new DashboardClient(app).signIn(user.email, NEW_PASSWORD)).statusCode).toBe(303)
    const [entry] = await changes(user.email)
    expect(entry).toMatchObject({ actor: user.email, detail: { how: 'own', sessionsEnded: 2 } })
    expect(JSON.stringify(entry)).not.toContain(NEW_PASSWORD)
  })

  it('refuses a wrong current password, a mismatch or a short password, changing nothing', async () => {
    const { client, user } = await signedInLowCost(app, ctx.database.db, 'editor')
    for (const [fields, message] of [
      [
        { current: 'wrong password here', password: NEW_PASSWORD, confirm: NEW_PASSWORD },
        'current password is not right',
      ],
      [{ current: PASSWORD, password: NEW_PASSWORD, confirm: 'something else entirely' }, 'are not the same'],
      [{ current: PASSWORD, password: 'short', confirm: 'short' }, 'at least 12 characters'],
    ] as const) {
      await client.get('/admin/account')
      const res = await client.post('/admin/account/password', fields)
      expect(res.statusCode, message).toBe(422)
      expect(textOf(res)).toContain(message)
    }
    expect(await changes(user.email)).toEqual([])
    expect(await sessionsOf(ctx, user.id)).toBe(1)
    expect((await new DashboardClient(app).signIn(user.email, PASSWORD)).statusCode).toBe(303)
  })

  it('refuses a password change without the CSRF token, and sends a signed-out browser to sign in', async () => {
    const { client, user } = await signedInLowCost(app, ctx.database.db, 'viewer')
    const forged = await client.post('/admin/account/password', {
      _csrf: 'forged',
      current: PASSWORD,
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    })
    expect(forged.statusCode).toBe(403)
    expect(await changes(user.email)).toEqual([])
    const signedOut = await new DashboardClient(app).get('/admin/account')
    expect(signedOut.statusCode).toBe(303)
    expect(signedOut.headers.location).toContain('/admin/login')
  })

  it('lets a global admin reset another user’s password: a generated one, shown once, and their sessions end', async () => {
    const { client: admin, user: adminUser } = await signedInLowCost(app, ctx.database.db)
    const target = await buildSignInUser(ctx.database.db, { role: 'editor' })
    const theirs = new DashboardClient(app)
    expect((await theirs.signIn(target.email)).statusCode).toBe(303)

    const confirm = await admin.get(`/admin/users/${target.id}/password`)
    expect(confirm.statusCode).toBe(200)
    expect(textOf(confirm)).toContain(`Reset the password of ${target.email}?`)
    const res = await admin.post(`/admin/users/${target.id}/password`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toContain('no-store')
    const generated = /id="new-password"[^>]*value="([0-9A-Za-z]{20})"/.exec(res.body)?.[1]
    expect(generated).toBeDefined()

    expect((await theirs.get('/admin')).statusCode).toBe(303)
    expect(await sessionsOf(ctx, target.id)).toBe(0)
    expect((await new DashboardClient(app).signIn(target.email, PASSWORD)).statusCode).toBe(401)
    expect((await new DashboardClient(app).signIn(target.email, generated)).statusCode).toBe(303)
    const [entry] = await changes(target.email)
    expect(entry).toMatchObject({ actor: adminUser.email, detail: { how: 'reset', sessionsEnded: 1 } })
    expect(JSON.stringify(entry)).not.toContain(generated)
    // The users page offers it for every other user.
    expect((await admin.get('/admin/users')).body).toContain(`href="/admin/users/${target.id}/password"`)
  })

  it('refuses resets by other roles and without the CSRF token, and sends an admin to their own account page', async () => {
    const { client: admin, user: adminUser } = await signedInLowCost(app, ctx.database.db)
    const target = await buildSignInUser(ctx.database.db, { role: 'viewer' })
    for (const role of ['editor', 'viewer'] as const) {
      const { client } = await signedInLowCost(app, ctx.database.db, role)
      expect((await client.get(`/admin/users/${target.id}/password`)).statusCode).toBe(403)
      expect((await client.post(`/admin/users/${target.id}/password`)).statusCode).toBe(403)
    }
    await admin.get('/admin/users')
    expect((await admin.post(`/admin/users/${target.id}/password`, { _csrf: 'forged' })).statusCode).toBe(403)
    expect(await changes(target.email)).toEqual([])

    const own = await admin.get(`/admin/users/${adminUser.id}/password`)
    expect(own.statusCode).toBe(303)
    expect(own.headers.location).toBe('/admin/account')
    expect((await admin.get('/admin/users/user_unknown/password')).statusCode).toBe(404)
  })

  it('ends every session of a user who is disabled', async () => {
    const { client: admin } = await signedInLowCost(app, ctx.database.db)
    const target = await buildSignInUser(ctx.database.db, { role: 'viewer' })
    const theirs = new DashboardClient(app)
    expect((await theirs.signIn(target.email)).statusCode).toBe(303)
    await admin.get('/admin/users')
    expect((await admin.post(`/admin/users/${target.id}/disable`)).statusCode).toBe(303)
    expect(await sessionsOf(ctx, target.id)).toBe(0)
    expect((await theirs.get('/admin')).statusCode).toBe(303)
  })
})

/**
 * A sign-in whose password check overlaps a change made by the command line (another process, as an
 * operator would run it). The test holds the hashing slots, so the sign-in reads the user, then waits
 * to check the password while the change commits. A process test: the slots are this process's, and
 * a change made in it would wait for them (and SQLite's wait for a lock would stall the server).
 */
describe('a sign-in overlapping a password reset or a disable', { timeout: 120_000 }, () => {
  let ctx: TestContext
  let base: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    base = await listenLocally(ctx.app)
  })
  afterAll(() => ctx.close())

  const cli = (args: string[], input?: string) => runCliProcess(args, { databaseUrl: ctx.databaseUrl, input })

  it.each([
    ['a reset', (email: string) => cli(['users', 'set-password', email], `${NEW_PASSWORD}\n`)],
    ['a disable', (email: string) => cli(['users', 'disable', email])],
  ])('opens no session with the old password when %s commits while it is checked', async (_, change) => {
    const user = await buildSignInUser(ctx.database.db, { role: 'editor' })
    const browser = new HttpBrowser(base)
    await browser.request('/admin/login')
    // From an idle queue (an earlier sign-in's decoy hash may still run), so both slots are taken at once.
    while (hashingLoad().running + hashingLoad().waiting > 0)
      await new Promise((resolve) => setTimeout(resolve, 5))
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const slots = Promise.all(
      Array.from({ length: PASSWORD_HASHING.concurrency }, () => withHashingSlot({}, () => held)),
    )
    const waiting = hashingLoad().waiting
    const signIn = browser.post('/admin/login', { email: user.email, password: PASSWORD })
    while (hashingLoad().waiting === waiting) await new Promise((resolve) => setTimeout(resolve, 5))

    const changed = await change(user.email)
    expect(changed.code, changed.stderr).toBe(0)
    release()
    await slots

    const res = await signIn
    expect(res.status).toBe(401)
    expect(pageText(await res.text())).toContain('The email or password is not right')
    expect(await sessionsOf(ctx, user.id)).toBe(0)
    const [failure] = (
      await ctx.services.audit.list({ action: 'session.sign_in_failed' }, { page: 1, pageSize: 100 })
    ).items.filter((entry) => entry.target === user.email)
    expect(failure).toMatchObject({ detail: { reason: 'changed_meanwhile' } })
  })
})
