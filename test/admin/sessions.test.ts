import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { buildSignInUser, signedInLowCost } from './low-cost-password.js'
import { buildAppWithSessions, DashboardClient, manualClock, PASSWORD, textOf } from './support.js'

const sessionCount = async (ctx: TestContext, userId: string) =>
  (await ctx.database.db.selectFrom('admin_sessions').select('id').where('user_id', '=', userId).execute())
    .length

describe('dashboard sign-in, sign-out and sessions', () => {
  let ctx: TestContext
  let app: FastifyInstance
  beforeAll(async () => {
    ctx = await createTestContext()
    app = ctx.app
  })
  afterAll(() => ctx.close())

  it('signs a user in with email and password and shows who is signed in', async () => {
    const user = await buildSignInUser(ctx.database.db, { role: 'editor' })
    const client = new DashboardClient(app)
    const res = await client.signIn(user.email.toUpperCase())
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/admin')
    const home = await client.get('/admin')
    expect(home.statusCode).toBe(200)
    expect(textOf(home)).toContain(`Signed in as ${user.email} , editor`)
  })

  it('sets an HttpOnly, SameSite=Lax session cookie limited to /admin, Secure only over HTTPS', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const plain = new DashboardClient(app)
    const res = await plain.signIn(user.email)
    const cookie = res.cookies.find((c) => c.name === 'lectern_session')
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/admin' })
    expect(cookie?.secure).toBeFalsy()
    // A session cookie: it has no expiry of its own; the server ends the session.
    expect(cookie?.expires).toBeUndefined()
    expect(cookie?.maxAge).toBeUndefined()
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const proxied = new DashboardClient(app, { headers: { 'x-forwarded-proto': 'https' } })
    const secure = (await proxied.signIn(user.email)).cookies.find((c) => c.name === 'lectern_session')
    expect(secure?.secure).toBe(true)
  })

  it('stores only a hash of the session token', async () => {
    const { client } = await signedInLowCost(app, ctx.database.db)
    const token = client.sessionToken as string
    const rows = await ctx.database.db.selectFrom('admin_sessions').selectAll().execute()
    for (const row of rows) for (const value of Object.values(row)) expect(String(value)).not.toContain(token)
    const hash = createHash('sha256').update(token).digest('hex')
    expect(rows.map((row) => row.id)).toContain(hash)
  })

  it('refuses a wrong password and an unknown email with the same message, and opens no session', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const wrong = await new DashboardClient(app).signIn(user.email, 'not the password at all')
    const unknown = await new DashboardClient(app).signIn('nobody@example.com')
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401)
      expect(textOf(res)).toContain('The email or password is not right')
      expect(res.cookies.find((c) => c.name === 'lectern_session')).toBeUndefined()
    }
    expect(await sessionCount(ctx, user.id)).toBe(0)
  })

  it('tells a disabled user with the right password that the account is disabled', async () => {
    const user = await buildSignInUser(ctx.database.db, { disabled: true })
    const res = await new DashboardClient(app).signIn(user.email)
    expect(res.statusCode).toBe(403)
    expect(textOf(res)).toContain('This account is disabled')
    expect(await sessionCount(ctx, user.id)).toBe(0)
  })

  it('renews the session id at sign-in and ends the session held before', async () => {
    const { client, user } = await signedInLowCost(app, ctx.database.db)
    const before = client.sessionToken as string
    // The sign-in form of another tab, opened before: its token is the browser's form cookie.
    const again = await client.post('/admin/login', {
      email: user.email,
      password: PASSWORD,
      _csrf: client.cookies.get('lectern_form')?.value ?? '',
    })
    expect(again.statusCode).toBe(303)
    const after = client.sessionToken as string
    expect(after).not.toBe(before)
    expect(await sessionCount(ctx, user.id)).toBe(1)

    const stale = new DashboardClient(app)
    stale.cookies.set('lectern_session', { value: before, path: '/admin' })
    expect((await stale.get('/admin')).statusCode).toBe(303)
    expect((await client.get('/admin')).statusCode).toBe(200)
  })

  it('never adopts a session id chosen by someone else (fixation)', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const client = new DashboardClient(app)
    const planted = 'A'.repeat(43)
    client.cookies.set('lectern_session', { value: planted, path: '/admin' })
    await client.signIn(user.email)
    expect(client.sessionToken).toBeDefined()
    expect(client.sessionToken).not.toBe(planted)
  })

  it('signs out: the session is deleted, the cookie cleared, and the old cookie no longer works', async () => {
    const { client, user } = await signedInLowCost(app, ctx.database.db)
    const token = client.sessionToken as string
    const res = await client.post('/admin/logout')
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/admin/login?notice=signed-out')
    expect(res.cookies.find((c) => c.name === 'lectern_session')?.value).toBe('')
    expect(await sessionCount(ctx, user.id)).toBe(0)
    expect(textOf(await client.get('/admin/login?notice=signed-out'))).toContain('You have signed out')

    const replay = new DashboardClient(app)
    replay.cookies.set('lectern_session', { value: token, path: '/admin' })
    const home = await replay.get('/admin/keys')
    expect(home.statusCode).toBe(303)
    expect(home.headers.location).toBe('/admin/login?next=%2Fadmin%2Fkeys')
  })

  it('sends a signed-out visitor to sign in, and back to the page they asked for afterwards', async () => {
    const user = await buildSignInUser(ctx.database.db)
    const client = new DashboardClient(app)
    const res = await client.get('/admin/redirects?page=2')
    expect(res.headers.location).toBe('/admin/login?next=%2Fadmin%2Fredirects%3Fpage%3D2')
    await client.get(res.headers.location as string)
    const signedIn = await client.post('/admin/login', {
      email: user.email,
      password: PASSWORD,
      next: '/admin/redirects?page=2',
    })
    expect(signedIn.headers.location).toBe('/admin/redirects?page=2')
  })

  it.each([
    'https://evil.example/admin',
    '//evil.example',
    '/admin//evil.example',
    '/admin/../x',
    '/elsewhere',
  ])('ignores a next address that leaves the dashboard (%s)', async (next) => {
    const user = await buildSignInUser(ctx.database.db)
    const client = new DashboardClient(app)
    await client.get('/admin/login')
    const res = await client.post('/admin/login', { email: user.email, password: PASSWORD, next })
    expect(res.headers.location).toBe('/admin')
  })

  it('ends every session of a user who is disabled, from the dashboard or the CLI', async () => {
    const { client: admin } = await signedInLowCost(app, ctx.database.db)
    const { client: first, user } = await signedInLowCost(app, ctx.database.db, 'editor')
    const second = new DashboardClient(app)
    await second.signIn(user.email)
    expect(await sessionCount(ctx, user.id)).toBe(2)

    await admin.get('/admin/users')
    const res = await admin.post(`/admin/users/${user.id}/disable`)
    expect(res.statusCode).toBe(303)
    expect(await sessionCount(ctx, user.id)).toBe(0)
    expect((await first.get('/admin')).statusCode).toBe(303)
    expect((await second.get('/admin')).statusCode).toBe(303)

    // Enabling the user again does not bring the old sessions back.
    await ctx.services.users.enableUser(user.email)
    expect((await first.get('/admin')).statusCode).toBe(303)

    const { client: third, user: other } = await signedInLowCost(app, ctx.database.db, 'viewer')
    await ctx.services.users.disableUser(other.email)
    expect((await third.get('/admin')).statusCode).toBe(303)
  })

  it('ends the sessions of a deleted user', async () => {
    const { client, user } = await signedInLowCost(app, ctx.database.db, 'viewer')
    await ctx.services.users.deleteUser(user.email)
    expect(await sessionCount(ctx, user.id)).toBe(0)
    expect((await client.get('/admin')).statusCode).toBe(303)
  })

  it('applies a role change to an open session on its next request', async () => {
    const { client, user } = await signedInLowCost(app, ctx.database.db, 'global_admin')
    expect((await client.get('/admin/keys')).statusCode).toBe(200)
    await ctx.services.users.setRole(user.email, 'viewer')
    expect((await client.get('/admin/keys')).statusCode).toBe(403)
    expect((await client.get('/admin/pages')).statusCode).toBe(200)
  })

  it('clears a cookie whose session no longer exists', async () => {
    const client = new DashboardClient(app)
    client.cookies.set('lectern_session', { value: 'B'.repeat(43), path: '/admin' })
    const res = await client.get('/admin')
    expect(res.statusCode).toBe(303)
    expect(res.cookies.find((c) => c.name === 'lectern_session')?.value).toBe('')
  })
})

describe('dashboard session timeouts', () => {
  let ctx: TestContext
  const clock = manualClock()
  const idleTimeoutMs = 10 * 60_000
  const absoluteTimeoutMs = 60 * 60_000
  let app: FastifyInstance
  beforeAll(async () => {
    ctx = await createTestContext()
    app = await buildAppWithSessions(ctx, { clock: clock.now, idleTimeoutMs, absoluteTimeoutMs })
  })
  afterAll(async () => {
    await app.close()
    await ctx.close()
  })

  it('ends a session left idle for longer than the idle timeout', async () => {
    const { client } = await signedInLowCost(app, ctx.database.db)
    clock.advance(idleTimeoutMs - 60_000)
    expect((await client.get('/admin')).statusCode).toBe(200)
    clock.advance(idleTimeoutMs - 60_000)
    expect((await client.get('/admin')).statusCode).toBe(200)
    clock.advance(idleTimeoutMs + 1000)
    const res = await client.get('/admin')
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/admin/login')
  })

  it('ends a busy session at its absolute lifetime', async () => {
    const { client } = await signedInLowCost(app, ctx.database.db)
    for (let elapsed = 0; elapsed < absoluteTimeoutMs - idleTimeoutMs / 2; elapsed += idleTimeoutMs / 2) {
      clock.advance(idleTimeoutMs / 2)
      expect((await client.get('/admin')).statusCode).toBe(200)
    }
    clock.advance(idleTimeoutMs / 2 + 1000)
    expect((await client.get('/admin')).statusCode).toBe(303)
  })
})
