import fc from 'fast-check'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm, buildPage, buildRedirect, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS, JSON_CONTENT_TYPE, unknownKey } from '../security-suite.js'

const RUNS = { numRuns: 200 }
const FORM_ID = 'form_properties'

const ENDPOINTS = [
  {
    path: '/api/v1/forms',
    filter: 'active',
    fields: ['id', 'title', 'description'],
  },
  {
    path: `/api/v1/forms/${FORM_ID}/submissions`,
    filter: undefined,
    fields: [
      'id',
      'data',
      'ipAddress',
      'userAgent',
      'referrer',
      'submittedBy',
      'isRead',
      'isStarred',
      'notes',
      'createdAt',
      'updatedAt',
    ],
  },
  {
    path: '/api/v1/page-builder',
    filter: 'published',
    fields: [
      'id',
      'title',
      'slug',
      'path',
      'pageType',
      'isPublished',
      'publishedAt',
      'createdAt',
      'updatedAt',
    ],
  },
  {
    path: '/api/v1/page-builder/redirects',
    filter: 'active',
    fields: ['id', 'fromPath', 'toPath', 'type', 'isActive', 'createdAt', 'updatedAt'],
  },
] as const

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const AUTH_ERRORS = [
  'missing_authorization_header',
  'invalid_authorization_format',
  'invalid_api_key',
  'api_key_inactive',
]

/** Characters a header value may hold on the wire (tab, visible ASCII, Latin-1 but no-break space). */
const headerChar = fc.oneof(
  fc.constantFrom('\t', ' '),
  fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xa1, max: 0xff }).map((c) => String.fromCharCode(c)),
)
const headerString = (maxLength = 40) => fc.string({ unit: headerChar, maxLength })

/** Percent sequences, valid and broken, and other characters that make query parsers stumble. */
const awkward = fc.constantFrom(
  '%',
  '%z',
  '%zz',
  '%E0%A4',
  '%00',
  '%2',
  '%25',
  '%26',
  '%3D',
  '+',
  '&',
  '=',
  '#',
  '?',
  '%F0%9F%98%80',
)
const queryPiece = fc.oneof(
  fc.constantFrom('page', 'pageSize', 'active', 'published', 'foo', '__proto__', 'constructor', ''),
  fc.constantFrom(
    '1',
    '2',
    '20',
    '100',
    '101',
    '0',
    '-1',
    'true',
    'false',
    'TRUE',
    '1.5',
    '1e1',
    '007',
    ' 1',
  ),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 8 }).map(encodeURIComponent),
  fc
    .string({ unit: 'binary', maxLength: 6 })
    .map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, ''))),
  fc
    .array(fc.oneof(awkward, fc.constantFrom('a', '1', 'é')), { maxLength: 5 })
    .map((parts) => parts.join('')),
)
const queryString = fc
  .array(
    fc.oneof(
      fc.tuple(queryPiece, queryPiece).map(([name, value]) => `${name}=${value}`),
      queryPiece,
    ),
    { maxLength: 6 },
  )
  .map((pairs) => pairs.join('&'))

/** What a query string must produce under the API's paging rules: 200 with this page and size, or 400. */
function expectedQueryOutcome(raw: string, filter: string | undefined) {
  // A '#' starts the fragment, which is not part of the query.
  const params = new URLSearchParams(raw.split('#')[0])
  const known = ['page', 'pageSize', ...(filter ? [filter] : [])]
  if (known.some((name) => params.getAll(name).length > 1)) return { status: 400 as const }
  const page = params.get('page')
  const pageSize = params.get('pageSize')
  const filterValue = filter ? params.get(filter) : null
  const digits = (s: string) => /^[0-9]+$/.test(s)
  if (page !== null && !(digits(page) && Number(page) >= 1)) return { status: 400 as const }
  if (page !== null && !Number.isSafeInteger(Number(page))) return { status: 'either' as const }
  if (pageSize !== null && !(digits(pageSize) && Number(pageSize) >= 1 && Number(pageSize) <= 100))
    return { status: 400 as const }
  if (filterValue !== null && filterValue !== 'true' && filterValue !== 'false')
    return { status: 400 as const }
  return {
    status: 200 as const,
    page: page === null ? 1 : Number(page),
    pageSize: pageSize === null ? 20 : Number(pageSize),
  }
}

/** The invariants of every response: no 5xx, JSON content type, a request id, the right body shape. */
function expectSoundResponse(res: LightMyRequestResponse, method: string, apiPath: boolean) {
  expect(res.statusCode).toBeLessThan(500)
  expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE)
  expect(res.headers['x-request-id']).toEqual(expect.any(String))
  if (method === 'HEAD') {
    expect(res.body).toBe('')
    return
  }
  const body = res.json()
  if (res.statusCode >= 400) {
    expect(Object.keys(body).sort()).toEqual(['error', 'message'])
    expect(typeof body.error).toBe('string')
    expect(typeof body.message).toBe('string')
  } else if (apiPath) {
    expect(Object.keys(body)).toEqual(['data', 'meta'])
    expect(Object.keys(body.meta)).toEqual(['total', 'page', 'pageSize', 'totalPages'])
  }
}

describe('property-based tests of the HTTP API', () => {
  let ctx: TestContext
  let app: FastifyInstance
  const keys = { valid: '', revoked: '', inactive: '', viewer: '' }

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    const db = ctx.database.db
    keys.valid = (await buildApiKey(db)).plainKey
    keys.revoked = (await buildApiKey(db, { revoked: true })).plainKey
    keys.inactive = (await buildApiKey(db, { active: false })).plainKey
    keys.viewer = (await buildApiKey(db, { role: 'viewer' })).plainKey
    await buildForm(db, { id: FORM_ID, description: 'seeded' })
    for (let i = 0; i < 25; i++) {
      await buildForm(db, { active: i % 3 !== 0 })
      await buildSubmission(db, { formId: FORM_ID, data: { i, note: `n${i}` }, isRead: i % 2 === 0 })
      await buildPage(db, { path: `/prop/${i}`, published: i % 2 === 0 })
      await buildRedirect(db, { fromPath: `/prop-r/${i}`, active: i % 4 !== 0 })
    }
  })
  afterAll(() => ctx.close())

  it('answers any query string as the paging rules say: 200 with the asked page, or 400 invalid_parameters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), queryString, async (endpoint, raw) => {
        const res = await app.inject({
          url: `${endpoint.path}?${raw}`,
          headers: { authorization: `Bearer ${keys.valid}` },
        })
        expectSoundResponse(res, 'GET', true)
        const expected = expectedQueryOutcome(raw, endpoint.filter)
        if (expected.status === 'either') {
          expect([200, 400]).toContain(res.statusCode)
        } else {
          expect(res.statusCode).toBe(expected.status)
        }
        const body = res.json()
        if (res.statusCode === 400) {
          expect(body.error).toBe('invalid_parameters')
          return
        }
        if (expected.status === 200) {
          expect(body.meta.page).toBe(expected.page)
          expect(body.meta.pageSize).toBe(expected.pageSize)
        }
        expect(body.meta.totalPages).toBe(Math.ceil(body.meta.total / body.meta.pageSize))
        expect(body.data.length).toBeLessThanOrEqual(body.meta.pageSize)
        for (const item of body.data) expect(Object.keys(item)).toEqual(endpoint.fields)
      }),
      RUNS,
    )
  })

  it('answers any method on any path with an envelope and never a 5xx', async () => {
    const segment = fc.oneof(
      fc.constantFrom(
        'api',
        'v1',
        'forms',
        'submissions',
        'page-builder',
        'redirects',
        FORM_ID,
        '',
        '.',
        '..',
        'healthz',
      ),
      fc.string({ maxLength: 10 }).map(encodeURIComponent),
      fc.string({ unit: 'grapheme', maxLength: 6 }).map(encodeURIComponent),
      fc.array(fc.oneof(awkward, fc.constantFrom('a', 'Z', '-')), { maxLength: 4 }).map((p) => p.join('')),
    )
    const path = fc.oneof(
      fc.array(segment, { maxLength: 5 }).map((segments) => `/api/v1/${segments.join('/')}`),
      fc.array(segment, { maxLength: 5 }).map((segments) => `/${segments.join('/')}`),
      fc.constantFrom(...ENDPOINTS.map((e) => e.path), '/api/v1', '/api/v1/'),
    )
    const authorization = fc.oneof(
      fc.constant(undefined),
      fc.constant(`Bearer ${keys.valid}`),
      fc.constant(`Bearer ${keys.viewer}`),
      headerString(),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...METHODS),
        path,
        fc.option(queryString, { nil: undefined }),
        authorization,
        fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
        async (method, pathname, query, auth, payload) => {
          const url = query === undefined ? pathname : `${pathname}?${query}`
          const headers: Record<string, string> = auth === undefined ? {} : { authorization: auth }
          const withBody = payload !== undefined && method !== 'GET' && method !== 'HEAD'
          if (withBody) headers['content-type'] = 'application/json'
          const res = await app.inject({
            method,
            url,
            headers,
            ...(withBody ? { payload: JSON.stringify(payload) } : {}),
          })
          // Dot segments are resolved before routing: `/api/v1/..` is `/api/`.
          const resolved = new URL(`http://localhost${url}`).pathname
          const apiPath = resolved === '/api/v1' || resolved.startsWith('/api/v1/')
          expectSoundResponse(res, method, apiPath)
          if (apiPath && WRITE_METHODS.has(method)) {
            // A path the router cannot even decode is a 400 before anything else looks at it.
            if (res.statusCode === 400) expect(() => decodeURIComponent(resolved)).toThrow()
            else
              expect({ status: res.statusCode, allow: res.headers.allow }).toEqual({
                status: 405,
                allow: 'GET, HEAD',
              })
          }
          const keyed = auth === `Bearer ${keys.valid}` || auth === `Bearer ${keys.viewer}`
          if (apiPath && keyed && res.headers['x-ratelimit-limit'] === undefined) {
            // Only a URL the router cannot decode is answered before the key is even read.
            expect(res.statusCode).toBe(400)
            expect(() => decodeURIComponent(resolved)).toThrow()
          }
          if (apiPath && res.statusCode === 401) {
            expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/)
            if (method !== 'HEAD') expect(AUTH_ERRORS).toContain(res.json().error)
          }
        },
      ),
      RUNS,
    )
  })

  it('answers any Authorization header as the authentication rules say', async () => {
    const token = fc.oneof(
      fc.constant(() => keys.valid),
      fc.constant(() => keys.revoked),
      fc.constant(() => keys.inactive),
      fc.constant(unknownKey),
      headerString(60).map((s) => () => s),
    )
    const header = fc.record({
      lead: fc.constantFrom('', ' ', '\t'),
      scheme: fc.oneof(
        fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEARER', 'Basic', 'Token', 'Bearer:', ''),
        headerString(8),
      ),
      separator: fc.constantFrom(' ', '  ', '\t', '', ' \t '),
      token,
      trail: fc.oneof(fc.constantFrom('', ' ', '\t', ' extra', ' Bearer'), headerString(10)),
    })
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), header, async (endpoint, parts) => {
        const value = `${parts.lead}${parts.scheme}${parts.separator}${parts.token()}${parts.trail}`
        const res = await app.inject({ url: endpoint.path, headers: { authorization: value } })
        expectSoundResponse(res, 'GET', true)
        const trimmed = value.replace(/^[ \t]+|[ \t]+$/g, '')
        const [, scheme, token] = /^([A-Za-z]+)[ \t]+([^ \t]+)$/.exec(trimmed) ?? []
        let expected: number | string
        if (trimmed === '') expected = 'missing_authorization_header'
        else if (scheme?.toLowerCase() !== 'bearer') expected = 'invalid_authorization_format'
        else if (token === keys.valid) expected = 200
        else if (token === keys.inactive) expected = 'api_key_inactive'
        else expected = 'invalid_api_key'
        if (expected === 200) {
          expect(res.statusCode).toBe(200)
        } else {
          expect({ status: res.statusCode, error: res.json().error }).toEqual({
            status: 401,
            error: expected,
          })
          expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/)
        }
      }),
      RUNS,
    )
  })

  it('answers any request id header with a sane request id', async () => {
    await fc.assert(
      fc.asyncProperty(headerString(200), async (id) => {
        const res = await app.inject({
          url: '/api/v1/forms',
          headers: { authorization: `Bearer ${keys.valid}`, 'x-request-id': id },
        })
        const returned = res.headers['x-request-id']
        expect(returned).toMatch(/^[A-Za-z0-9._:-]{1,128}$/)
        if (/^[A-Za-z0-9._:-]{1,128}$/.test(id)) expect(returned).toBe(id)
      }),
      RUNS,
    )
  })
})
