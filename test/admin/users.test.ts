import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm, buildUser } from '../factories.js'
import { HttpBrowser, listenLocally } from '../hardening/http-browser.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request } from '../security-suite.js'
import { buildDashboardUser, DashboardClient, PASSWORD, rowText, signedInClient, textOf } from './support.js'

const FORM_ID = 'form_users_test'
const SUBMISSIONS = `/api/v1/forms/${FORM_ID}/submissions`

describe('Organization → Users', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let admin: DashboardClient
  let adminUser: { id: string; email: string }

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    await buildForm(ctx.database.db, { id: FORM_ID })
    ;({ client: admin, user: adminUser } = await signedInClient(app, ctx.database.db))
  })
  afterAll(() => ctx.close())

  it('refuses to demote, disable or delete the last enabled global admin, saying why', async () => {
    await admin.get('/admin/users')
    for (const [action, fields, message] of [
      ['role', { role: 'editor' }, 'Cannot demote the last enabled global admin'],
      ['disable', {}, 'Cannot disable the last enabled global admin'],
      ['delete', {}, 'Cannot delete the last enabled global admin'],
    ] as const) {
      const res = await admin.post(`/admin/users/${adminUser.id}/${action}`, fields)
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe('/admin/users')
      const page = await admin.get('/admin/users')
      expect(page.statusCode).toBe(200)
      expect(textOf(page)).toContain(message)
    }
    expect(await ctx.services.users.findUser(adminUser.email)).toMatchObject({
      role: 'global_admin',
      status: 'active',
    })
  })

  it('lists users with their role, status and keys, and explains what roles do to keys', async () => {
    const user = await buildUser(ctx.database.db, { role: 'editor' })
    await buildApiKey(ctx.database.db, { userId: user.id })
    await buildApiKey(ctx.database.db, { userId: user.id, active: false })
    const page = await admin.get('/admin/users')
    const row = rowText(page, `user-${user.id}`)
    expect(row).toContain(user.email)
    expect(row).toContain('Active')
    expect(row).toContain('1 active of 2')
    expect(page.body).toMatch(/<option value="editor" selected>Editor<\/option>/)
    const text = textOf(page)
    expect(text).toContain('Deleting a user revokes their keys for good')
    expect(text).toContain('never sees submissions')
    expect(rowText(page, `user-${adminUser.id}`)).toContain('You')
  })

  it('adds a user with a generated password shown once, who can then sign in', async () => {
    await admin.get('/admin/users/new')
    const res = await admin.post('/admin/users', { email: 'Grace@Example.com', role: 'editor', password: '' })
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(textOf(res)).toContain('Copy this password now: it is shown only once')
    const password = /id="new-password"[^>]*value="([^"]+)"/.exec(res.body)?.[1] as string
    expect(password).toMatch(/^[0-9A-Za-z]{20}$/)
    expect(await ctx.services.users.findUser('grace@example.com')).toMatchObject({ role: 'editor' })
    expect((await new DashboardClient(app).signIn('grace@example.com', password)).statusCode).toBe(303)
    expect((await admin.get('/admin/users')).body).not.toContain(password)
  })

  it('adds a user with a password the admin chose', async () => {
    await admin.get('/admin/users/new')
    const res = await admin.post('/admin/users', {
      email: 'linus@example.com',
      role: 'viewer',
      password: PASSWORD,
    })
    expect(res.statusCode).toBe(201)
    expect(res.body).not.toContain(PASSWORD)
    expect((await new DashboardClient(app).signIn('linus@example.com')).statusCode).toBe(303)
  })

  it.each([
    [{ email: 'not-an-email', role: 'viewer', password: '' }, "'not-an-email' is not a valid email address"],
    [
      { email: 'short@example.com', role: 'viewer', password: 'short' },
      'Password must be at least 12 characters',
    ],
    [{ email: 'role@example.com', role: 'owner', password: '' }, "Unknown role 'owner'"],
  ])('refuses a user it cannot create and says why (%j)', async (fields, message) => {
    await admin.get('/admin/users/new')
    const res = await admin.post('/admin/users', fields)
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain(message)
  })

  it('refuses a second user with the same email', async () => {
    await buildUser(ctx.database.db, { email: 'twice@example.com' })
    await admin.get('/admin/users/new')
    const res = await admin.post('/admin/users', { email: 'TWICE@example.com', role: 'viewer', password: '' })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain("A user with email 'twice@example.com' already exists")
  })

  it('changes a role, says what it does to their keys, and the keys follow on the next request', async () => {
    const user = await buildUser(ctx.database.db, { role: 'global_admin' })
    const key = await buildApiKey(ctx.database.db, { userId: user.id })
    expectList(await request(app, SUBMISSIONS, key.authorization))

    await admin.get('/admin/users')
    const res = await admin.post(`/admin/users/${user.id}/role`, { role: 'editor' })
    expect(res.statusCode).toBe(303)
    expect(textOf(await admin.get('/admin/users'))).toContain(
      `${user.email} is now an editor: their API keys read forms, pages and redirects, no longer submissions`,
    )
    expectError(await request(app, SUBMISSIONS, key.authorization), 403, 'insufficient_permissions')
    expectList(await request(app, '/api/v1/forms', key.authorization))

    await admin.post(`/admin/users/${user.id}/role`, { role: 'viewer' })
    expectError(await request(app, '/api/v1/forms', key.authorization), 403, 'insufficient_permissions')
  })

  it('disables and enables a user, suspending their keys meanwhile', async () => {
    const user = await buildUser(ctx.database.db, { role: 'global_admin' })
    const key = await buildApiKey(ctx.database.db, { userId: user.id })
    await admin.get('/admin/users')
    await admin.post(`/admin/users/${user.id}/disable`)
    const page = await admin.get('/admin/users')
    expect(textOf(page)).toContain(`${user.email} is disabled: they are signed out`)
    expect(rowText(page, `user-${user.id}`)).toContain('Disabled')
    expectError(await request(app, '/api/v1/forms', key.authorization), 401, 'api_key_inactive')

    await admin.post(`/admin/users/${user.id}/enable`)
    expect(textOf(await admin.get('/admin/users'))).toContain(`${user.email} is enabled`)
    expectList(await request(app, '/api/v1/forms', key.authorization))
  })

  it('asks before deleting, says the keys will be revoked, then deletes and revokes', async () => {
    const user = await buildUser(ctx.database.db, { role: 'editor' })
    const key = await buildApiKey(ctx.database.db, { userId: user.id })
    await buildApiKey(ctx.database.db, { userId: user.id, active: false })
    const confirm = await admin.get(`/admin/users/${user.id}/delete`)
    expect(textOf(confirm)).toContain(`Delete ${user.email}?`)
    expect(textOf(confirm)).toContain('Their 2 API keys (1 active) will be revoked for good')

    const res = await admin.post(`/admin/users/${user.id}/delete`)
    expect(res.statusCode).toBe(303)
    expect(textOf(await admin.get('/admin/users'))).toContain(
      `${user.email} is deleted, and their API keys are revoked`,
    )
    expectError(await request(app, '/api/v1/forms', key.authorization), 401, 'invalid_api_key')
    const keys = await ctx.services.keys.listApiKeys()
    expect(keys.find((k) => k.id === key.id)).toMatchObject({ status: 'revoked', createdBy: null })
  })

  it('sends an admin who demotes themselves to a page they can still see', async () => {
    const { client, user } = await signedInClient(app, ctx.database.db, 'global_admin')
    await client.get('/admin/users')
    const res = await client.post(`/admin/users/${user.id}/role`, { role: 'viewer' })
    expect(res.headers.location).toBe('/admin')
    const home = await client.get('/admin')
    expect(home.statusCode).toBe(200)
    expect(textOf(home)).toContain(`${user.email} is now a viewer`)
  })

  it('answers 404 with a page for a user that does not exist', async () => {
    expect((await admin.get('/admin/users/user_nope/delete')).statusCode).toBe(404)
  })
})

// Over real sockets, so that each request has its own connection and its own transaction.
describe('the last enabled global admin under concurrent changes', { timeout: 120_000 }, () => {
  let ctx: TestContext
  let base: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    base = await listenLocally(ctx.app)
  })
  afterAll(() => ctx.close())

  it('keeps one when two admins demote, disable or delete each other at the same moment', async () => {
    const db = ctx.database.db
    const pair = await Promise.all(
      [0, 1].map(async () => {
        const user = await buildDashboardUser(db, { role: 'global_admin' })
        const browser = new HttpBrowser(base)
        expect((await browser.signIn(user.email, PASSWORD)).status).toBe(303)
        await browser.request('/admin/users')
        return { user, browser }
      }),
    )
    // Each round starts from this state: the two admins, each with their session.
    const sessions = await db.selectFrom('admin_sessions').selectAll().execute()
    const restore = async () => {
      await db.deleteFrom('users').execute()
      await db
        .insertInto('users')
        .values(pair.map(({ user }) => user))
        .execute()
      await db.insertInto('admin_sessions').values(sessions).execute()
    }
    const changes = [
      ['role', { role: 'editor' }],
      ['disable', {}],
      ['delete', {}],
    ] as const
    const [a, b] = pair
    for (let round = 0; round < 18; round++) {
      const [aAction, aFields] = changes[round % 3]
      const [bAction, bFields] = changes[Math.floor(round / 3) % 3]
      const answers = await Promise.all([
        a.browser.post(`/admin/users/${b.user.id}/${aAction}`, aFields),
        b.browser.post(`/admin/users/${a.user.id}/${bAction}`, bFields),
      ])
      // A change is made, refused as the last admin's, or refused because its author lost the right first.
      for (const res of answers) expect([303, 403]).toContain(res.status)
      const left = (await ctx.services.users.listUsers()).filter(
        (u) => u.role === 'global_admin' && u.status === 'active',
      )
      expect(left, `round ${round}: ${aAction} and ${bAction}`).toHaveLength(1)
      await restore()
    }
  })
})
