import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NO_LISTENERS } from '../../src/services/notifications/outbox.js'
import { buildApiKey, buildForm, buildPage, buildRedirect, buildSubmission, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { DashboardClient, PASSWORD, signedInClient, textOf } from './support.js'

/** Every route of `app` that answers POST, read from Fastify's route tree. */
function postRoutes(app: FastifyInstance): string[] {
  const parents: string[] = []
  const routes: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false, method: 'POST' }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([^)]*)\))?/.exec(line)
    if (!match) continue
    const depth = (match[1] ?? '').length / 4
    const path = (parents[depth - 1] ?? '') + match[2]
    parents[depth] = path
    parents.length = depth + 1
    if (match[3]?.split(', ').includes('POST')) routes.push(path)
  }
  return routes
}

/** Everything a refused request must leave alone. */
async function contentSnapshot(ctx: TestContext) {
  const db = ctx.database.db
  return JSON.stringify(
    await Promise.all([
      db.selectFrom('users').selectAll().orderBy('id').execute(),
      db.selectFrom('api_keys').select(['id', 'name', 'is_active', 'revoked_at']).orderBy('id').execute(),
      db.selectFrom('forms').selectAll().orderBy('id').execute(),
      db.selectFrom('submissions').selectAll().orderBy('id').execute(),
      db.selectFrom('pages').selectAll().orderBy('id').execute(),
      db.selectFrom('redirects').selectAll().orderBy('id').execute(),
      db.selectFrom('spam_submissions').selectAll().orderBy('id').execute(),
      db.selectFrom('webhook_endpoints').selectAll().orderBy('id').execute(),
    ]),
  )
}

describe('CSRF protection of every state-changing dashboard route', () => {
  let ctx: TestContext
  let admin: DashboardClient
  let adminId: string
  const routes: { route: string; url: string; fields: Record<string, string> }[] = []

  beforeAll(async () => {
    ctx = await createTestContext()
    const db = ctx.database.db
    ;({
      client: admin,
      user: { id: adminId },
    } = await signedInClient(ctx.app, db))
    const form = await buildForm(db)
    const submission = await buildSubmission(db, { formId: form.id })
    const page = await buildPage(db)
    const redirect = await buildRedirect(db, { fromPath: '/a', toPath: '/b' })
    await buildRedirect(db, { fromPath: '/b', toPath: '/c' })
    const user = await buildUser(db, { role: 'viewer' })
    const key = await buildApiKey(db, { userId: adminId })
    const email = 'someone@example.com'
    const spam = await ctx.services.intake.accept(
      form.id,
      {
        data: { email },
        ipAddress: null,
        userAgent: null,
        referrer: null,
        spam: true,
      },
      NO_LISTENERS,
    )
    // Never reached (the token is checked first): a row is enough, its secret need not open.
    const webhook = 'whk_csrf0000000000000000'
    await db
      .insertInto('webhook_endpoints')
      .values({
        id: webhook,
        url: 'https://example.com/hook',
        events: '["content.changed"]',
        form_id: null,
        status: 'active',
        secret: 'v1:x:y:z',
        previous_secret: null,
        previous_secret_until: null,
        consecutive_failures: 0,
        last_failure_at: null,
        last_success_at: null,
        created_at: '2024-01-01T00:00:00Z',
      })
      .execute()
    routes.push(
      { route: '/admin/webhooks', url: '/admin/webhooks', fields: { url: 'https://example.com/x' } },
      { route: '/admin/webhooks/:id/rotate', url: `/admin/webhooks/${webhook}/rotate`, fields: {} },
      { route: '/admin/webhooks/:id/enable', url: `/admin/webhooks/${webhook}/enable`, fields: {} },
      {
        route: '/admin/webhooks/:id/resend',
        url: `/admin/webhooks/${webhook}/resend`,
        fields: { eventId: 'evt_x' },
      },
      { route: '/admin/webhooks/:id/remove', url: `/admin/webhooks/${webhook}/remove`, fields: {} },
      {
        route: '/admin/setup',
        url: '/admin/setup',
        fields: { email, password: PASSWORD, confirm: PASSWORD },
      },
      { route: '/admin/login', url: '/admin/login', fields: { email, password: PASSWORD } },
      { route: '/admin/logout', url: '/admin/logout', fields: {} },
      { route: '/admin/keys', url: '/admin/keys', fields: { name: 'sneaky' } },
      { route: '/admin/keys/:id/deactivate', url: `/admin/keys/${key.id}/deactivate`, fields: {} },
      { route: '/admin/keys/:id/activate', url: `/admin/keys/${key.id}/activate`, fields: {} },
      { route: '/admin/keys/:id/revoke', url: `/admin/keys/${key.id}/revoke`, fields: {} },
      { route: '/admin/keys/:id/rename', url: `/admin/keys/${key.id}/rename`, fields: { name: 'renamed' } },
      {
        route: '/admin/account/password',
        url: '/admin/account/password',
        fields: { current: PASSWORD, password: 'a brand new passphrase', confirm: 'a brand new passphrase' },
      },
      { route: '/admin/users/:id/password', url: `/admin/users/${user.id}/password`, fields: {} },
      {
        route: '/admin/users',
        url: '/admin/users',
        fields: { email, role: 'global_admin', password: PASSWORD },
      },
      {
        route: '/admin/users/:id/role',
        url: `/admin/users/${user.id}/role`,
        fields: { role: 'global_admin' },
      },
      { route: '/admin/users/:id/disable', url: `/admin/users/${user.id}/disable`, fields: {} },
      { route: '/admin/users/:id/enable', url: `/admin/users/${user.id}/enable`, fields: {} },
      { route: '/admin/users/:id/delete', url: `/admin/users/${user.id}/delete`, fields: {} },
      {
        route: '/admin/forms/:id/active',
        url: `/admin/forms/${form.id}/active`,
        fields: { active: 'false' },
      },
      {
        route: '/admin/submissions/:id/read',
        url: `/admin/submissions/${submission.id}/read`,
        fields: { read: 'true' },
      },
      {
        route: '/admin/submissions/:id/star',
        url: `/admin/submissions/${submission.id}/star`,
        fields: { starred: 'true' },
      },
      {
        route: '/admin/submissions/:id/notes',
        url: `/admin/submissions/${submission.id}/notes`,
        fields: { notes: 'x' },
      },
      {
        route: '/admin/forms/:id/submissions/bulk',
        url: `/admin/forms/${form.id}/submissions/bulk`,
        fields: { action: 'read', ids: submission.id },
      },
      {
        route: '/admin/submissions/:id/delete',
        url: `/admin/submissions/${submission.id}/delete`,
        fields: {},
      },
      {
        route: '/admin/pages/:id/published',
        url: `/admin/pages/${page.id}/published`,
        fields: { published: 'false' },
      },
      { route: '/admin/forms', url: '/admin/forms', fields: { title: 'Sneaky form', isActive: 'true' } },
      { route: '/admin/forms/:id', url: `/admin/forms/${form.id}`, fields: { title: 'Renamed' } },
      { route: '/admin/forms/:id/delete', url: `/admin/forms/${form.id}/delete`, fields: {} },
      {
        route: '/admin/forms/:id/fields',
        url: `/admin/forms/${form.id}/fields`,
        fields: { count: '1', 'name-0': 'sneaky', 'type-0': 'text', op: 'save' },
      },
      {
        route: '/admin/forms/:id/intake',
        url: `/admin/forms/${form.id}/intake`,
        fields: { enabled: 'true', storeIpAddress: 'true' },
      },
      { route: '/admin/spam/:id/not-spam', url: `/admin/spam/${spam}/not-spam`, fields: {} },
      { route: '/admin/spam/:id/delete', url: `/admin/spam/${spam}/delete`, fields: {} },
      { route: '/admin/pages', url: '/admin/pages', fields: { title: 'Sneaky', slug: 's', path: '/sneaky' } },
      {
        route: '/admin/pages/:id',
        url: `/admin/pages/${page.id}`,
        fields: { title: 'Renamed', slug: 'r', path: '/renamed' },
      },
      { route: '/admin/pages/:id/delete', url: `/admin/pages/${page.id}/delete`, fields: {} },
      {
        route: '/admin/redirects',
        url: '/admin/redirects',
        fields: { fromPath: '/new', toPath: '/x', type: 'permanent', isActive: 'true' },
      },
      {
        route: '/admin/redirects/:id',
        url: `/admin/redirects/${redirect.id}`,
        fields: { fromPath: '/a', toPath: '/z', type: 'temporary' },
      },
      {
        route: '/admin/redirects/:id/active',
        url: `/admin/redirects/${redirect.id}/active`,
        fields: { active: 'false' },
      },
      { route: '/admin/redirects/:id/delete', url: `/admin/redirects/${redirect.id}/delete`, fields: {} },
      { route: '/admin/redirects/flatten', url: '/admin/redirects/flatten', fields: {} },
      {
        route: '/admin/redirects/import',
        url: '/admin/redirects/import',
        fields: { csv: 'fromPath,toPath\n/q,/r\n' },
      },
    )
  })
  afterAll(() => ctx.close())

  it('covers every POST route the dashboard has', () => {
    const registered = postRoutes(ctx.app).filter((route) => route.startsWith('/admin'))
    expect(registered.sort()).toEqual(routes.map(({ route }) => route).sort())
  })

  it('refuses every change without a token, with a wrong one, with another session’s, or from another site, and changes nothing', async () => {
    const { client: other } = await signedInClient(ctx.app, ctx.database.db)
    const before = await contentSnapshot(ctx)
    await admin.get('/admin')
    const valid = admin.csrf
    const attempts: [string, Record<string, string>, Record<string, string>][] = [
      ['no token', {}, {}],
      ['an empty token', { _csrf: '' }, {}],
      ['a wrong token', { _csrf: `${valid.slice(0, -1)}${valid.endsWith('A') ? 'B' : 'A'}` }, {}],
      ["another session's token", { _csrf: other.csrf }, {}],
      // As many characters as the token, one of them two bytes: a mismatch, not a comparison that throws.
      ['a token with a character of two bytes', { _csrf: `${valid.slice(0, -1)}é` }, {}],
      ['a cross-site origin', { _csrf: valid }, { origin: 'https://evil.example' }],
      ['a cross-site fetch', { _csrf: valid }, { 'sec-fetch-site': 'cross-site' }],
    ]
    for (const { url, fields } of routes) {
      for (const [label, token, headers] of attempts) {
        // The public forms (setup, sign-in) check the form cookie; the others the session's token.
        const body = { ...fields, ...token }
        const res = await admin.request({
          method: 'POST',
          url,
          payload: new URLSearchParams(body).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        })
        expect({ url, label, status: res.statusCode }).toEqual({ url, label, status: 403 })
        expect(textOf(res)).toContain('This form has expired')
      }
    }
    expect(await contentSnapshot(ctx)).toBe(before)
    // The session survived all of it, logout included.
    expect((await admin.get('/admin')).statusCode).toBe(200)
  })

  it('accepts a change carrying the session token in a form field or the X-CSRF-Token header', async () => {
    await admin.get('/admin/redirects')
    const viaField = await admin.post('/admin/redirects', {
      fromPath: '/field',
      toPath: '/x',
      type: 'permanent',
    })
    expect(viaField.statusCode).toBe(303)
    const viaHeader = await admin.request({
      method: 'POST',
      url: '/admin/redirects',
      payload: new URLSearchParams({ fromPath: '/header', toPath: '/x', type: 'permanent' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-csrf-token': admin.csrf },
    })
    expect(viaHeader.statusCode).toBe(303)
  })

  it('gives each session its own token and keeps it for the session', async () => {
    const first = await signedInClient(ctx.app, ctx.database.db)
    const second = await signedInClient(ctx.app, ctx.database.db)
    expect(first.client.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(first.client.csrf).not.toBe(second.client.csrf)
    const token = first.client.csrf
    await first.client.get('/admin/redirects')
    expect(first.client.csrf).toBe(token)
  })

  it('refuses a sign-in form posted without the form cookie that came with it', async () => {
    const client = new DashboardClient(ctx.app)
    await client.get('/admin/login')
    const token = client.csrf
    client.cookies.delete('lectern_form')
    const res = await client.post('/admin/login', {
      email: 'someone@example.com',
      password: PASSWORD,
      _csrf: token,
    })
    expect(res.statusCode).toBe(403)
  })
})
