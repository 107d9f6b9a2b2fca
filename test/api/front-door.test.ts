import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey } from '../factories.js'
import { listenLocally } from '../hardening/http-browser.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS, JSON_CONTENT_TYPE } from '../security-suite.js'

/** What a browser sends when a person types the server's address. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'

describe('the way in, over HTTP', () => {
  let ctx: TestContext
  let base: string
  let authorization: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    base = await listenLocally(ctx.app)
    authorization = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  const api = (path: string) => fetch(`${base}${path}`, { headers: { authorization } })

  describe('GET /', () => {
    it('shows a browser a page with links to the dashboard and the API reference', async () => {
      const res = await fetch(`${base}/`, { headers: { accept: BROWSER_ACCEPT } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(res.headers.get('vary')).toContain('Accept')
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
      const page = await res.text()
      expect(page).toContain('<a href="/admin">')
      expect(page).toContain('<a href="/docs">')
      expect(page).toContain('<a href="/openapi.json">')
      expect(page).toContain('Authorization: Bearer &lt;API_KEY&gt;')
    })

    it.each([
      ['*/*', '*/*'],
      ['no Accept header', undefined],
      ['JSON', 'application/json'],
      ['HTML refused', 'text/html;q=0, application/json'],
    ])('answers a program (%s) with the same links as JSON', async (_, accept) => {
      const res = await fetch(`${base}/`, { headers: accept === undefined ? {} : { accept } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe(JSON_CONTENT_TYPE)
      expect(await res.json()).toEqual({
        name: 'Lectern',
        message: expect.stringContaining('/api/v1'),
        links: { admin: '/admin', docs: '/docs', openapi: '/openapi.json', api: '/api/v1/forms' },
      })
    })

    it('answers HEAD with the headers and no body', async () => {
      const res = await fetch(`${base}/`, { method: 'HEAD', headers: { accept: BROWSER_ACCEPT } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(await res.text()).toBe('')
    })
  })

  describe('an unknown path under /api/v1', () => {
    it.each([
      ['/api/v1/forms/', '/api/v1/forms'],
      ['/api/v1/forms//', '/api/v1/forms'],
      ['/api/v1/page-builder/redirects/', '/api/v1/page-builder/redirects'],
      ['/api/v1/forms/Form_X/submissions/', '/api/v1/forms/Form_X/submissions'],
      ['/api/v1/Forms', '/api/v1/forms'],
      ['/api/v1/Page-Builder/?page=2', '/api/v1/page-builder'],
    ])('answers %s with 404 resource_not_found, naming %s as the likely path', async (path, meant) => {
      const res = await api(path)
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({
        error: 'resource_not_found',
        message: `The requested resource does not exist. Did you mean ${meant}?`,
      })
    })

    it.each(['/api/v1/nope', '/api/v1/'])(
      'answers %s, close to no route, with the plain 404',
      async (path) => {
        const res = await api(path)
        expect(res.status).toBe(404)
        expect(await res.json()).toEqual({
          error: 'resource_not_found',
          message: 'The requested resource does not exist',
        })
      },
    )
  })

  it.each(['99999999999999999999', '9007199254740992'])(
    'refuses page=%s with a message giving the largest page there can be',
    async (page) => {
      const res = await api(`/api/v1/forms?page=${page}`)
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({
        error: 'invalid_parameters',
        message: "Parameter 'page' must be an integer between 1 and 9007199254740991",
      })
    },
  )
})

describe('GET / on an API-only instance, over HTTP', () => {
  let ctx: TestContext
  let base: string

  beforeAll(async () => {
    ctx = await createTestContext({ surfaces: { ADMIN_DASHBOARD: 'off', API_REFERENCE: 'off' } })
    base = await listenLocally(ctx.app)
  })
  afterAll(() => ctx.close())

  it('links only to what the instance serves', async () => {
    const page = await (await fetch(`${base}/`, { headers: { accept: BROWSER_ACCEPT } })).text()
    expect(page).not.toContain('/admin')
    expect(page).not.toContain('/docs')
    expect(page).toContain('<a href="/openapi.json">')
    const json = (await (await fetch(`${base}/`)).json()) as { links: Record<string, string> }
    expect(json.links).toEqual({ openapi: '/openapi.json', api: '/api/v1/forms' })
  })
})
