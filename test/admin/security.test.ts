import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm, buildPage, buildRedirect, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, GENEROUS_LIMITS, request } from '../security-suite.js'
import { DashboardClient, signedInClient, textOf } from './support.js'

describe('security headers and markup of the dashboard', () => {
  let ctx: TestContext
  let admin: DashboardClient
  const pages: string[] = []
  beforeAll(async () => {
    ctx = await createTestContext()
    admin = (await signedInClient(ctx.app, ctx.database.db)).client
    const db = ctx.database.db
    const form = await buildForm(db, { title: '<script>alert(1)</script>' })
    await buildSubmission(db, { formId: form.id, data: { name: '<img src=x onerror=alert(1)>' } })
    await buildPage(db, { title: '"quoted" & <b>bold</b>' })
    const redirect = await buildRedirect(db, { fromPath: '/a', toPath: '/b' })
    await buildRedirect(db, { fromPath: '/b', toPath: '/c' })
    const key = await buildApiKey(db)
    pages.push(
      '/admin',
      '/admin/forms',
      `/admin/forms/${form.id}/submissions`,
      '/admin/pages',
      '/admin/redirects',
      '/admin/redirects/new',
      '/admin/redirects/import',
      `/admin/redirects/${redirect.id}/edit`,
      `/admin/redirects/${redirect.id}/delete`,
      '/admin/keys',
      '/admin/keys/new',
      `/admin/keys/${key.id}/revoke`,
      '/admin/users',
      '/admin/users/new',
      '/admin/no-such-page',
    )
  })
  afterAll(() => ctx.close())

  it('sends a strict Content-Security-Policy without inline scripts or styles', async () => {
    const res = await admin.get('/admin')
    const policy = Object.fromEntries(
      String(res.headers['content-security-policy'])
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    )
    expect(policy['default-src']).toEqual(["'self'"])
    expect(policy['script-src']).toEqual(["'self'"])
    expect(policy['style-src']).toEqual(["'self'"])
    expect(policy['script-src-attr']).toEqual(["'none'"])
    expect(policy['object-src']).toEqual(["'none'"])
    expect(policy['base-uri']).toEqual(["'none'"])
    expect(policy['form-action']).toEqual(["'self'"])
    expect(policy['frame-ancestors']).toEqual(["'none'"])
  })

  it('sends the other helmet headers: no framing, no sniffing, no referrer to other sites, HSTS, isolation', async () => {
    const res = await new DashboardClient(ctx.app).get('/admin/login')
    expect(res.headers).toMatchObject({
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'strict-transport-security': expect.stringMatching(/^max-age=\d+/),
      'cache-control': 'no-store',
    })
    expect(res.headers['x-powered-by']).toBeUndefined()
  })

  it('keeps every page free of inline script, event handlers and style attributes, and escapes content', async () => {
    for (const url of pages) {
      const res = await admin.get(url)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(res.headers['cache-control']).toBe('no-store')
      for (const tag of res.body.match(/<script\b[^>]*>/g) ?? [])
        expect(tag).toMatch(/ src="\/admin\/static\//)
      expect(res.body).not.toMatch(/<script\b[^>]*>[^<]+<\/script>/)
      for (const tag of res.body.match(/<[a-z][^>]*>/gi) ?? []) {
        expect(tag).not.toMatch(/\son[a-z]+=/i)
        expect(tag).not.toMatch(/\sstyle=/i)
      }
      expect(res.body).not.toMatch(/<style\b/i)
      expect(res.body).not.toContain('<script>alert(1)</script>')
      expect(res.body).not.toContain('<img src=x')
      expect(res.body).not.toContain('<b>bold</b>')
    }
    expect(textOf(await admin.get('/admin/forms'))).toContain('<script>alert(1)</script>')
  })

  it('serves the stylesheet and the script as files, with the same headers', async () => {
    const css = await admin.get('/admin/static/admin.css')
    expect(css.statusCode).toBe(200)
    expect(css.headers['content-type']).toMatch(/^text\/css/)
    expect(css.headers['x-content-type-options']).toBe('nosniff')
    const js = await admin.get('/admin/static/admin.js')
    expect(js.statusCode).toBe(200)
    expect(js.headers['content-type']).toMatch(/javascript/)
    expect((await admin.get('/admin/static/../index.ts')).statusCode).toBe(404)
  })

  it('answers an unknown dashboard address with an HTML page, and the API with its JSON envelope', async () => {
    const page = await admin.get('/admin/nothing/here')
    expect(page.statusCode).toBe(404)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(textOf(page)).toContain('Page not found')
    const key = await buildApiKey(ctx.database.db)
    const api = await request(ctx.app, '/api/v1/nothing', key.authorization)
    expectError(api, 404, 'resource_not_found')
    expect(api.headers['content-security-policy']).toBeUndefined()
  })

  it('shows an HTML error page without internals when something unexpected fails', async () => {
    await sql`alter table redirects rename to redirects_moved`.execute(ctx.database.db)
    try {
      const res = await admin.get('/admin/redirects')
      expect(res.statusCode).toBe(500)
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(textOf(res)).toContain('Something went wrong')
      expect(textOf(res)).toContain(`Request id: ${res.headers['x-request-id']}`)
      expect(res.body).not.toMatch(/redirects_moved|no such table|does not exist|at .*\.ts/)
    } finally {
      await sql`alter table redirects_moved rename to redirects`.execute(ctx.database.db)
    }
  })
})

describe('the dashboard and the API never accept each other’s credentials', () => {
  let ctx: TestContext
  let app: FastifyInstance
  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
  })
  afterAll(() => ctx.close())

  it('does not let a valid API key open a dashboard page', async () => {
    const key = await buildApiKey(ctx.database.db, { role: 'global_admin' })
    for (const url of ['/admin', '/admin/keys', '/admin/forms']) {
      const res = await app.inject({ method: 'GET', url, headers: { authorization: key.authorization } })
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toMatch(/^\/admin\/login/)
    }
  })

  it('does not let a valid API key make a dashboard change', async () => {
    const key = await buildApiKey(ctx.database.db, { role: 'global_admin' })
    const res = await app.inject({
      method: 'POST',
      url: '/admin/keys',
      headers: { authorization: key.authorization, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=sneaky',
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/admin/login')
    expect((await ctx.services.keys.listApiKeys()).map((k) => k.name)).not.toContain('sneaky')
  })

  it('does not let a dashboard session call the API, as a cookie or as a bearer token', async () => {
    const { client } = await signedInClient(app, ctx.database.db)
    const token = client.sessionToken as string
    const withCookie = await request(app, '/api/v1/forms', undefined, {
      headers: { cookie: `lectern_session=${token}`, 'x-csrf-token': client.csrf },
    })
    expectError(withCookie, 401, 'missing_authorization_header')
    expectError(await request(app, '/api/v1/forms', `Bearer ${token}`), 401, 'invalid_api_key')
  })

  it('scopes the session cookie to /admin, so browsers never send it to the API', async () => {
    const { client } = await signedInClient(app, ctx.database.db)
    expect(client.cookies.get('lectern_session')?.path).toBe('/admin')
  })
})

describe('an upload the multipart parser cannot read', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  it('answers 400 with the dashboard error page, not a logged 500', async () => {
    const { client } = await signedInClient(ctx.app, ctx.database.db)
    await client.request({ url: '/admin/redirects/import' })
    const res = await client.request({
      url: '/admin/redirects/import',
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz', 'x-csrf-token': client.csrf },
      payload:
        '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nfromPath,toPath\r\n/a,',
    })
    expect(res.statusCode).toBe(400)
    expect(textOf(res)).toContain('The upload could not be read')
  })
})
