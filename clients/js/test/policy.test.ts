import { readFileSync } from 'node:fs'
import type { OpenAPIV3_1 } from 'openapi-types'
import { describe, expect, it } from 'vitest'
import { ERROR_RESPONSES } from '../../../src/http/docs/responses.js'
import { OPENAPI_FILE } from '../../../test/contract/checker.js'
import { parseRetryAfter } from '../src/errors.js'
import {
  ERROR_TYPES,
  type FetchFunction,
  InvalidRequestError,
  Lectern,
  LecternError,
  NotFoundError,
  RateLimitError,
  RequestAbortedError,
  ServerError,
  ServiceUnavailableError,
  type SleepFunction,
} from '../src/index.js'
import { DEFAULT_RETRY, retryDelay } from '../src/transport.js'

// These tests play the server's part with canned responses, for the cases a real server cannot be
// made to answer on demand: the real server's part is in client.test.ts and retries.test.ts.

const envelope = (status: number, error: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error, message: `${error} happened` }), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-9', ...headers },
  })
const emptyList = () =>
  new Response(JSON.stringify({ data: [], meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 } }), {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  })

/** A `fetch` answering with the given responses in turn. */
function cannedFetch(...responses: (() => Response)[]): FetchFunction & { count: number } {
  const fake = Object.assign(
    async () => {
      const next = responses[Math.min(fake.count, responses.length - 1)]
      fake.count++
      return (next as () => Response)()
    },
    { count: 0 },
  )
  return fake
}

const client = (fetch: FetchFunction, retry?: ConstructorParameters<typeof Lectern>[0]['retry']) =>
  new Lectern({ baseUrl: 'http://lectern.test', apiKey: 'lk_live_x', fetch, retry })

/** A fake clock's sleep: records each wait and returns at once, so no test ever sleeps for real. */
function fakeSleep(): SleepFunction & { waits: number[] } {
  const waits: number[] = []
  return Object.assign(
    async (ms: number, signal?: AbortSignal) => {
      if (signal?.aborted) throw signal.reason
      waits.push(ms)
    },
    { waits },
  )
}

describe('the retry policy', () => {
  const rateLimited = new RateLimitError({
    status: 429,
    type: 'rate_limit_exceeded',
    message: 'slow down',
    requestId: null,
    retryAfter: 2,
  })
  const unavailable = (retryAfter: number | null) =>
    new ServiceUnavailableError({
      status: 503,
      type: 'service_unavailable',
      message: 'x',
      requestId: null,
      retryAfter,
    })

  it('never waits less than Retry-After, and adds at most baseDelayMs of jitter', () => {
    expect(retryDelay(rateLimited, 0, DEFAULT_RETRY, () => 0)).toBe(2000)
    expect(retryDelay(rateLimited, 0, DEFAULT_RETRY, () => 0.999)).toBe(2500)
  })

  it('backs off exponentially with jitter when there is no Retry-After, up to maxDelayMs', () => {
    const retry = { maxRetries: 10, baseDelayMs: 100, maxDelayMs: 1000 }
    expect([0, 1, 2, 3].map((attempt) => retryDelay(unavailable(null), attempt, retry, () => 0.999))).toEqual(
      [100, 200, 400, 800],
    )
    expect(retryDelay(unavailable(null), 2, retry, () => 0)).toBe(200)
    expect(retryDelay(unavailable(null), 8, retry, () => 0.999)).toBe(1000)
  })

  it('gives up when the retries are used up, the wait is over the cap, retries are off, or the status is not retried', () => {
    expect(retryDelay(rateLimited, 2, DEFAULT_RETRY)).toBeNull()
    expect(retryDelay(unavailable(3600), 0, DEFAULT_RETRY)).toBeNull()
    expect(retryDelay(rateLimited, 0, false)).toBeNull()
    const server = new ServerError({
      status: 500,
      type: 'internal_error',
      message: 'x',
      requestId: null,
      retryAfter: 1,
    })
    expect(retryDelay(server, 0, DEFAULT_RETRY)).toBeNull()
  })

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2024-01-05T10:00:00Z')
    expect(parseRetryAfter('7', now)).toBe(7)
    expect(parseRetryAfter('Fri, 05 Jan 2024 10:00:30 GMT', now)).toBe(30)
    expect(parseRetryAfter('Fri, 05 Jan 2024 09:00:00 GMT', now)).toBe(0)
    expect(parseRetryAfter('soon', now)).toBeNull()
    expect(parseRetryAfter(null, now)).toBeNull()
  })

  it('retries a 503 without Retry-After after a backoff', async () => {
    const fetch = cannedFetch(
      () => envelope(503, 'service_unavailable'),
      () => emptyList(),
    )
    const { meta } = await client(fetch, { baseDelayMs: 5 }).pages.list()
    expect(meta.total).toBe(0)
    expect(fetch.count).toBe(2)
  })

  it('does not retry other errors', async () => {
    const fetch = cannedFetch(() => envelope(500, 'internal_error'))
    const error = await client(fetch)
      .pages.list()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServerError)
    expect(error).toMatchObject({ status: 500, type: 'internal_error', requestId: 'req-9' })
    expect(fetch.count).toBe(1)
  })

  it('stops waiting when the request is aborted, with its own error carrying the reason', async () => {
    const fetch = cannedFetch(() => envelope(429, 'rate_limit_exceeded', { 'retry-after': '20' }))
    const controller = new AbortController()
    const listing = client(fetch).forms.list({}, { signal: controller.signal })
    const reason = new Error('stop')
    setTimeout(() => controller.abort(reason), 20)
    const error = await listing.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RequestAbortedError)
    expect(error).toBeInstanceOf(LecternError)
    expect(error).toMatchObject({ status: 0, type: 'aborted', cause: reason })
    expect(fetch.count).toBe(1)
  })

  it('waits Retry-After plus jitter on the injected clock, for each 429, up to maxRetries', async () => {
    const fetch = cannedFetch(
      () => envelope(429, 'rate_limit_exceeded', { 'retry-after': '3' }),
      () => envelope(429, 'rate_limit_exceeded', { 'retry-after': '1' }),
      () => emptyList(),
    )
    const sleep = fakeSleep()
    const lectern = new Lectern({
      baseUrl: 'http://lectern.test',
      apiKey: 'lk_live_x',
      fetch,
      sleep,
      random: () => 0.5,
      maxRetries: 2,
    })
    expect((await lectern.pages.list()).meta.total).toBe(0)
    expect(sleep.waits).toEqual([3250, 1250])
    expect(lectern.lastResponse?.status).toBe(200)
  })

  it('backs off exponentially between 503s without Retry-After, then throws the last one', async () => {
    const fetch = cannedFetch(() => envelope(503, 'service_unavailable'))
    const sleep = fakeSleep()
    const lectern = new Lectern({
      baseUrl: 'http://lectern.test',
      apiKey: 'lk_live_x',
      fetch,
      sleep,
      random: () => 0.999,
      retry: { maxRetries: 3, baseDelayMs: 100 },
    })
    const error = await lectern.forms.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServiceUnavailableError)
    expect(sleep.waits).toEqual([100, 200, 400])
    expect(fetch.count).toBe(4)
  })

  it('honours maxRetries: 0 as no retry at all', async () => {
    const fetch = cannedFetch(() => envelope(429, 'rate_limit_exceeded', { 'retry-after': '1' }))
    const sleep = fakeSleep()
    const lectern = new Lectern({
      baseUrl: 'http://lectern.test',
      apiKey: 'lk_live_x',
      fetch,
      sleep,
      maxRetries: 0,
    })
    expect(await lectern.forms.list().catch((e: unknown) => e)).toBeInstanceOf(RateLimitError)
    expect(sleep.waits).toEqual([])
    expect(fetch.count).toBe(1)
  })

  it('refuses options that are not whole numbers of at least 0', () => {
    for (const option of [{ maxRetries: -1 }, { timeoutMs: 1.5 }, { etagCacheSize: Number.NaN }])
      expect(() => new Lectern({ baseUrl: 'http://lectern.test', apiKey: 'k', ...option })).toThrow(
        /whole number/,
      )
  })
})

describe('errors the API does not describe', () => {
  it('reports a body that is not the envelope (a proxy page) as an unexpected response', async () => {
    const fetch = cannedFetch(() => new Response('<html>Bad gateway</html>', { status: 502 }))
    const error = await client(fetch)
      .forms.list()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServerError)
    expect(error).toMatchObject({ status: 502, type: 'unexpected_response' })
    const odd = cannedFetch(() => new Response('{}', { status: 418 }))
    const teapot = await client(odd)
      .forms.list()
      .catch((e: unknown) => e)
    expect(teapot).toBeInstanceOf(LecternError)
    expect(teapot).toMatchObject({ status: 418, type: 'unexpected_response' })
  })

  it.each([
    [404, NotFoundError],
    [429, RateLimitError],
    [503, ServiceUnavailableError],
  ] as const)(
    'picks the class of a %i that is not the envelope from its status, as the other clients do',
    async (status, kind) => {
      const fetch = cannedFetch(
        () => new Response('<html>Not here</html>', { status, headers: { 'retry-after': '0' } }),
      )
      const error = await client(fetch, false)
        .forms.list()
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(kind)
      expect(error).toMatchObject({ status, type: 'unexpected_response' })
    },
  )

  it('picks the class from the error type, in either form', async () => {
    const fetch = cannedFetch(() => envelope(414, 'URI too long'))
    const error = await client(fetch)
      .forms.list()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error).toMatchObject({ status: 414, type: 'uri_too_long' })
  })
})

describe("the client's error types", () => {
  it('are exactly the error types of openapi.json, with their statuses and phrases', () => {
    const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenAPIV3_1.Document
    const documented = new Map<string, number>()
    const statusOf = Object.fromEntries(ERROR_RESPONSES.map(({ name, status }) => [name, status]))
    for (const [name, response] of Object.entries(document.components?.responses ?? {})) {
      const schema = (response as OpenAPIV3_1.ResponseObject).content?.['application/json']?.schema as {
        allOf: { properties: { error: { enum: string[] } } }[]
      }
      for (const label of schema.allOf[1]?.properties.error.enum ?? [])
        documented.set(label, statusOf[name] as number)
    }
    const expected = new Map<string, number>()
    for (const [type, { status, phrase }] of Object.entries(ERROR_TYPES)) {
      expected.set(type, status)
      expected.set(phrase, status)
    }
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(expected))
  })
})
