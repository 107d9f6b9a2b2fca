import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import {
  expectError,
  expectList,
  GENEROUS_LIMITS,
  JSON_CONTENT_TYPE,
  request,
  unknownKey,
} from '../security-suite.js'

const FORM_ID = 'form_methods'
const ENDPOINTS = [
  '/api/v1/forms',
  `/api/v1/forms/${FORM_ID}/submissions`,
  '/api/v1/page-builder',
  '/api/v1/page-builder/redirects',
]
const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const

describe('methods, unknown paths and request ids under /api/v1', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let auth: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    auth = (await buildApiKey(ctx.database.db)).authorization
    await buildForm(ctx.database.db, { id: FORM_ID })
  })
  afterAll(() => ctx.close())

  describe('write methods', () => {
    const paths = [
      ...ENDPOINTS,
      '/api/v1/forms/form_unknown/submissions',
      '/api/v1/nope',
      '/api/v1',
      '/api/v1/',
    ]
    const credentials = [
      ['no key', () => undefined],
      ['a valid key', () => auth],
      ['an unknown key', () => `Bearer ${unknownKey()}`],
      ['a malformed header', () => 'Basic abc'],
    ] as const

    describe.each(WRITE_METHODS)('%s', (method) => {
      it.each(paths)(
        `answers ${method} %s with 405 method_not_allowed and Allow: GET, HEAD`,
        async (path) => {
          for (const [, credential] of credentials) {
            const res = await request(app, path, credential(), {
              method,
              payload: { title: 'New form', isActive: true },
            })
            expectError(res, 405, 'method_not_allowed')
            expect(res.headers.allow).toBe('GET, HEAD')
          }
        },
      )
    })

    it('answers 405 whatever the body: malformed JSON, another media type or a large body', async () => {
      const bodies = [
        { 'content-type': 'application/json', payload: '{"title":' },
        { 'content-type': 'text/xml', payload: '<form/>' },
        { 'content-type': 'application/json', payload: JSON.stringify({ big: 'x'.repeat(200_000) }) },
      ]
      for (const { payload, ...headers } of bodies) {
        for (const authorization of [auth, undefined]) {
          const res = await request(app, '/api/v1/forms', authorization, {
            method: 'POST',
            payload,
            headers,
          })
          expectError(res, 405, 'method_not_allowed')
          expect(res.headers.allow).toBe('GET, HEAD')
        }
      }
    })

    it('does not write anything', async () => {
      const before = expectList(await request(app, '/api/v1/forms', auth)).meta.total
      await request(app, '/api/v1/forms', auth, { method: 'POST', payload: { title: 'Injected' } })
      await request(app, `/api/v1/forms/${FORM_ID}/submissions`, auth, { method: 'DELETE' })
      expect(expectList(await request(app, '/api/v1/forms', auth)).meta.total).toBe(before)
      expect(expectList(await request(app, `/api/v1/forms/${FORM_ID}/submissions`, auth)).meta.total).toBe(0)
    })
  })

  it('ignores a body sent with GET, even a malformed or oversized one', async () => {
    for (const payload of ['{"title":', JSON.stringify({ big: 'x'.repeat(2_000_000) })]) {
      const res = await request(app, '/api/v1/forms', auth, {
        payload,
        headers: { 'content-type': 'application/json' },
      })
      expectList(res)
    }
  })

  describe('HEAD', () => {
    it.each(ENDPOINTS)('answers HEAD %s with 200, the GET headers and an empty body', async (path) => {
      const res = await request(app, path, auth, { method: 'HEAD' })
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe('')
      expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE)
      expect(res.headers['x-request-id']).toEqual(expect.any(String))
      expect(res.headers['x-ratelimit-limit']).toBeDefined()
      expect(res.headers['x-ratelimit-remaining']).toBeDefined()
      expect(res.headers['x-ratelimit-reset']).toBeDefined()
    })

    it('answers HEAD with invalid parameters with 400 and an empty body', async () => {
      const res = await request(app, '/api/v1/forms?pageSize=0', auth, { method: 'HEAD' })
      expect(res.statusCode).toBe(400)
      expect(res.body).toBe('')
    })

    it('answers HEAD on an unknown path with 404 and an empty body', async () => {
      const res = await request(app, '/api/v1/nope', auth, { method: 'HEAD' })
      expect(res.statusCode).toBe(404)
      expect(res.body).toBe('')
    })
  })

  describe('unknown paths', () => {
    it.each([
      '/api/v1',
      '/api/v1/',
      '/api/v1/nope',
      '/api/v1/forms/',
      '/api/v1/FORMS',
      `/api/v1/forms/${FORM_ID}/submissions/`,
      `/api/v1/forms/${FORM_ID}/submissions/extra`,
      '/api/v1/forms//submissions',
      '/api/v1/page-builder/',
      '/api/v1/page-builder/redirects/x',
      '/api/v1/users',
      '/api/v1/keys',
    ])('answers GET %s with a valid key with 404 resource_not_found', async (path) => {
      expectError(await request(app, path, auth), 404, 'resource_not_found')
    })

    it('asks for a key before saying that an /api/v1 path does not exist', async () => {
      expectError(await request(app, '/api/v1/nope'), 401, 'missing_authorization_header')
    })

    it.each(['/api', '/api/v2/forms', '/forms', '/api/v1x'])(
      'answers %s, outside the API, with the 404 envelope',
      async (path) => {
        expectError(await request(app, path, auth), 404, 'resource_not_found')
      },
    )
  })

  describe('X-Request-Id', () => {
    it('generates a request id when none is given, different for each request', async () => {
      const a = await request(app, '/api/v1/forms', auth)
      const b = await request(app, '/api/v1/forms', auth)
      expect(a.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{8,}$/)
      expect(b.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{8,}$/)
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id'])
    })

    it.each(['req-123', 'a1b2c3d4-e5f6-7890-abcd-ef1234567890', 'trace.01:span_02', 'x'.repeat(100)])(
      'echoes the sane incoming request id %s',
      async (id) => {
        const res = await request(app, '/api/v1/forms', auth, { headers: { 'x-request-id': id } })
        expect(res.headers['x-request-id']).toBe(id)
      },
    )

    it.each([
      ['spaces', 'abc def'],
      ['500 characters', 'a'.repeat(500)],
      ['markup', '<script>alert(1)</script>'],
      ['quotes and semicolons', '"id";drop'],
      ['a comma-joined list', 'a,b'],
    ])('replaces an incoming request id with %s by a fresh one', async (_, id) => {
      const res = await request(app, '/api/v1/forms', auth, { headers: { 'x-request-id': id } })
      expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{8,128}$/)
      expect(res.headers['x-request-id']).not.toBe(id)
    })

    it.each([
      ['200', '/api/v1/forms', true, 'GET'],
      ['400', '/api/v1/forms?page=0', true, 'GET'],
      ['401', '/api/v1/forms', false, 'GET'],
      ['404', '/api/v1/nope', true, 'GET'],
      ['404 outside the API', '/nope', false, 'GET'],
      ['405', '/api/v1/forms', true, 'DELETE'],
      ['HEAD', '/api/v1/forms', true, 'HEAD'],
    ] as const)(
      'carries X-Request-Id on a %s response, echoing a sane one',
      async (_, path, withKey, method) => {
        const credential = withKey ? auth : undefined
        const generated = await request(app, path, credential, { method })
        expect(generated.headers['x-request-id']).toEqual(expect.any(String))
        const echoed = await request(app, path, credential, {
          method,
          headers: { 'x-request-id': 'client-7' },
        })
        expect(echoed.headers['x-request-id']).toBe('client-7')
      },
    )
  })

  it('answers a malformed percent-encoding in the path with the 400 envelope', async () => {
    const res = await request(app, '/api/v1/forms/%zz/submissions', auth)
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE)
    expect(Object.keys(res.json()).sort()).toEqual(['error', 'message'])
    expect(res.headers['x-request-id']).toEqual(expect.any(String))
  })
})
