import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { DashboardClient, PASSWORD, textOf } from './support.js'

describe('first-run setup of the dashboard', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await createTestContext()
  })
  afterEach(() => ctx.close())

  it('sends a visitor of an empty installation from /admin to the setup form', async () => {
    const client = new DashboardClient(ctx.app)
    const home = await client.get('/admin')
    expect(home.statusCode).toBe(303)
    expect(home.headers.location).toBe('/admin/login')
    const login = await client.get('/admin/login')
    expect(login.statusCode).toBe(303)
    expect(login.headers.location).toBe('/admin/setup')
    const setup = await client.get('/admin/setup')
    expect(setup.statusCode).toBe(200)
    expect(setup.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(textOf(setup)).toContain('Create the first global admin')
  })

  it('creates the first global admin, who can then sign in, and the form is gone afterwards', async () => {
    const client = new DashboardClient(ctx.app)
    await client.get('/admin/setup')
    const created = await client.post('/admin/setup', {
      email: 'Ada@Example.com',
      password: PASSWORD,
      confirm: PASSWORD,
    })
    expect(created.statusCode).toBe(303)
    expect(created.headers.location).toBe('/admin/login?notice=setup-done')

    const [user] = await ctx.services.users.listUsers()
    expect(user).toMatchObject({ email: 'ada@example.com', role: 'global_admin', status: 'active' })

    expect((await client.get('/admin/setup')).statusCode).toBe(404)
    const again = await client.post('/admin/setup', {
      email: 'eve@example.com',
      password: PASSWORD,
      confirm: PASSWORD,
    })
    expect(again.statusCode).toBe(404)
    expect(await ctx.services.users.listUsers()).toHaveLength(1)

    const signedIn = await client.signIn('ada@example.com')
    expect(signedIn.statusCode).toBe(303)
    expect(signedIn.headers.location).toBe('/admin')
    expect(textOf(await client.get('/admin'))).toContain('Signed in as ada@example.com')
  })

  it('offers no setup once a user exists, even one created with the CLI', async () => {
    await ctx.services.users.createUser({ email: 'cli@example.com', role: 'viewer', password: PASSWORD })
    const client = new DashboardClient(ctx.app)
    expect((await client.get('/admin/setup')).statusCode).toBe(404)
    expect((await client.get('/admin/login')).statusCode).toBe(200)
  })

  it('explains what is wrong with the form and creates nobody', async () => {
    const client = new DashboardClient(ctx.app)
    await client.get('/admin/setup')
    const mismatch = await client.post('/admin/setup', {
      email: 'a@example.com',
      password: PASSWORD,
      confirm: 'other',
    })
    expect(mismatch.statusCode).toBe(422)
    expect(textOf(mismatch)).toContain('The two passwords do not match')
    const short = await client.post('/admin/setup', {
      email: 'a@example.com',
      password: 'short',
      confirm: 'short',
    })
    expect(short.statusCode).toBe(422)
    expect(textOf(short)).toContain('Password must be at least 12 characters')
    const badEmail = await client.post('/admin/setup', {
      email: 'nope',
      password: PASSWORD,
      confirm: PASSWORD,
    })
    expect(textOf(badEmail)).toContain("'nope' is not a valid email address")
    expect(textOf(badEmail)).not.toContain(PASSWORD)
    expect(await ctx.services.users.hasUsers()).toBe(false)
  })

  it('creates exactly one admin when several setups are sent at once', async () => {
    const clients = Array.from({ length: 5 }, () => new DashboardClient(ctx.app))
    for (const client of clients) await client.get('/admin/setup')
    const answers = await Promise.all(
      clients.map((client, i) =>
        client.post('/admin/setup', {
          email: `admin${i}@example.com`,
          password: PASSWORD,
          confirm: PASSWORD,
        }),
      ),
    )
    expect(answers.filter((res) => res.statusCode === 303)).toHaveLength(1)
    expect(await ctx.services.users.listUsers()).toHaveLength(1)
  })

  it('refuses a setup form without its CSRF token, or with a wrong one', async () => {
    const client = new DashboardClient(ctx.app)
    await client.get('/admin/setup')
    const fields = { email: 'a@example.com', password: PASSWORD, confirm: PASSWORD }
    expect((await client.post('/admin/setup', { ...fields, _csrf: '' })).statusCode).toBe(403)
    expect((await client.post('/admin/setup', { ...fields, _csrf: 'x'.repeat(43) })).statusCode).toBe(403)
    const stranger = new DashboardClient(ctx.app)
    expect((await stranger.post('/admin/setup', { ...fields, _csrf: client.csrf })).statusCode).toBe(403)
    expect(await ctx.services.users.hasUsers()).toBe(false)
  })
})
