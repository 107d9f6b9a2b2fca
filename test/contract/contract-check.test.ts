import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS, JSON_CONTENT_TYPE, request } from '../security-suite.js'
import { contractChecker, type ObservedResponse } from './checker.js'
import { takeContractViolations } from './recorder.js'

const FORM = { id: 'form_contact', title: 'Contact us', description: null }
const LIST_HEADERS = {
  'content-type': JSON_CONTENT_TYPE,
  'x-request-id': 'req-1',
  'x-ratelimit-limit': '1000',
  'x-ratelimit-remaining': '999',
  'x-ratelimit-reset': '1704452400',
  'ratelimit-policy': '"hour";q=1000;w=3600, "burst";q=10;w=1',
  ratelimit: '"hour";r=999;t=3600',
  etag: '"v1-abc"',
  'cache-control': 'private, no-cache',
}

/** A response that matches the document; each test breaks one thing. */
function formsPage(overrides: Partial<ObservedResponse> = {}): ObservedResponse {
  return {
    method: 'GET',
    url: '/api/v1/forms?active=true',
    statusCode: 200,
    headers: LIST_HEADERS,
    body: JSON.stringify({ data: [FORM], meta: { total: 1, page: 1, pageSize: 20, totalPages: 1 } }),
    ...overrides,
  }
}

function errorResponse(
  statusCode: number,
  error: string,
  headers: ObservedResponse['headers'] = {},
  request: Partial<ObservedResponse> = {},
): ObservedResponse {
  return {
    method: 'GET',
    url: '/api/v1/forms',
    statusCode,
    headers: { 'content-type': JSON_CONTENT_TYPE, 'x-request-id': 'req-1', ...headers },
    body: JSON.stringify({ error, message: 'Something went wrong' }),
    ...request,
  }
}

const check = (response: ObservedResponse) => contractChecker().check(response)

describe('the contract checker', () => {
  it('accepts a response that matches the document', () => {
    expect(check(formsPage())).toEqual([])
  })

  it('accepts a HEAD response without a body', () => {
    expect(check(formsPage({ method: 'HEAD', body: '' }))).toEqual([])
  })

  it('catches an item with a field the schema does not have', () => {
    const body = JSON.stringify({
      data: [{ ...FORM, isActive: true }],
      meta: { total: 1, page: 1, pageSize: 20, totalPages: 1 },
    })
    expect(check(formsPage({ body }))).toEqual([
      expect.stringContaining('must NOT have additional properties'),
    ])
  })

  it('catches a field of the wrong type and a missing field', () => {
    const body = JSON.stringify({ data: [{ id: 7, title: 'Contact us' }], meta: { total: 1 } })
    const [problem] = check(formsPage({ body }))
    expect(problem).toContain('/data/0/id must be string')
    expect(problem).toContain("must have required property 'description'")
    expect(problem).toContain("/meta must have required property 'page'")
  })

  it('catches a body that is not JSON, and a content type the document does not give', () => {
    expect(check(formsPage({ body: '<html></html>' }))).toEqual([expect.stringContaining('not JSON')])
    const headers = { ...LIST_HEADERS, 'content-type': 'text/html; charset=utf-8' }
    expect(check(formsPage({ headers }))).toEqual([expect.stringContaining('content type "text/html"')])
  })

  it('catches a status the operation does not document', () => {
    expect(check(formsPage({ statusCode: 418 }))).toEqual([
      expect.stringContaining('status 418 is not documented for listForms'),
    ])
    // Only an operation with a path parameter can answer 404.
    expect(check(errorResponse(404, 'resource_not_found'))).toEqual([
      expect.stringContaining('status 404 is not documented'),
    ])
  })

  it('catches a required header that is missing or malformed', () => {
    const { 'x-ratelimit-remaining': _, ...missing } = LIST_HEADERS
    expect(check(formsPage({ headers: missing }))).toEqual(['header X-RateLimit-Remaining is missing'])
    const malformed = { ...LIST_HEADERS, 'x-ratelimit-reset': 'soon' }
    expect(check(formsPage({ headers: malformed }))).toEqual([
      expect.stringContaining('header X-RateLimit-Reset: "soon" must be integer'),
    ])
  })

  it('checks that an error carries a type of its status, in either style', () => {
    const challenge = { 'www-authenticate': 'Bearer' }
    expect(check(errorResponse(401, 'invalid_api_key', challenge))).toEqual([])
    expect(check(errorResponse(401, 'Invalid API key', challenge))).toEqual([])
    expect(check(errorResponse(401, 'rate_limit_exceeded', challenge))).toEqual([
      expect.stringContaining('/error must be equal to one of the allowed values'),
    ])
    expect(check(errorResponse(401, 'invalid_api_key'))).toEqual(['header WWW-Authenticate is missing'])
  })

  it('checks an error body has exactly error and message', () => {
    const response = errorResponse(400, 'invalid_parameters')
    const body = JSON.stringify({ error: 'invalid_parameters', message: 'Bad page', statusCode: 400 })
    expect(check({ ...response, body })).toEqual([
      expect.stringContaining('must NOT have additional properties'),
    ])
  })

  it('checks a method the API does not serve against the shared 405 response', () => {
    const post = { method: 'POST' }
    expect(check(errorResponse(405, 'method_not_allowed', { allow: 'GET, HEAD' }, post))).toEqual([])
    expect(check(errorResponse(405, 'method_not_allowed', {}, post))).toEqual(['header Allow is missing'])
    expect(check(errorResponse(405, 'method_not_allowed', { allow: 'GET, POST' }, post))).toEqual([
      expect.stringContaining('header Allow'),
    ])
    expect(check(formsPage({ method: 'POST' }))).toEqual([
      expect.stringContaining('matches no operation and 200 is no shared error response'),
    ])
  })

  it('checks unknown /api/v1 paths against the shared error responses, and ignores other paths', () => {
    expect(check(errorResponse(404, 'resource_not_found', {}, { url: '/api/v1/nope' }))).toEqual([])
    expect(check(errorResponse(404, 'invalid_api_key', {}, { url: '/api/v1/nope' }))).not.toEqual([])
    expect(check({ ...formsPage(), url: '/healthz', body: '{"status":"ok"}' })).toEqual([])
  })
})

describe('the contract check of the test harness', () => {
  let ctx: TestContext
  let auth: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    auth = (await buildApiKey(ctx.database.db)).authorization
    // Stands in for a bug: a field the document does not have, on requests that ask for it.
    ctx.app.addHook('preHandler', async (req, reply) => {
      if (!req.headers['x-break-contract']) return
      const meta = { total: 0, page: 1, pageSize: 20, totalPages: 0 }
      await reply.type(JSON_CONTENT_TYPE).send(JSON.stringify({ data: [], meta, extra: true }))
    })
  })
  afterAll(() => ctx.close())

  it('records nothing for responses that match the document', async () => {
    await request(ctx.app, '/api/v1/forms', auth)
    await request(ctx.app, '/api/v1/forms', 'Basic abc')
    await request(ctx.app, '/api/v1/forms', auth, { method: 'DELETE' })
    expect(takeContractViolations()).toEqual([])
  })

  it('records a response of the app that does not match the document, for the running test to fail', async () => {
    const res = await request(ctx.app, '/api/v1/forms', auth, { headers: { 'x-break-contract': '1' } })
    expect(res.json()).toHaveProperty('extra', true)
    expect(takeContractViolations()).toEqual([
      expect.stringMatching(/^GET \/api\/v1\/forms answered 200:[\s\S]*must NOT have additional properties/),
    ])
  })

  it('checks responses sent over real HTTP as well', async () => {
    const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    const res = await fetch(`${address}/api/v1/page-builder`, {
      headers: { authorization: auth, 'x-break-contract': '1' },
    })
    expect(res.status).toBe(200)
    expect(takeContractViolations()).toEqual([
      expect.stringMatching(/^GET \/api\/v1\/page-builder answered 200/),
    ])
  })
})
