import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS, JSON_CONTENT_TYPE } from '../security-suite.js'

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * Writes `payload` to a fresh TCP connection exactly as given and reads until the server closes it.
 * Rejects when the server closes without a response or does not answer within two seconds.
 */
function exchange(port: number, payload: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(
        new Error(`no complete response within 2 s; got ${JSON.stringify(Buffer.concat(chunks).toString())}`),
      )
    }, 2000)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      const raw = Buffer.concat(chunks).toString('utf8')
      const split = raw.indexOf('\r\n\r\n')
      if (split === -1) {
        reject(new Error(`bare close: ${JSON.stringify(raw)}`))
        return
      }
      const [statusLine, ...lines] = raw.slice(0, split).split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(':')
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(split + 4) })
    })
    socket.write(payload)
  })
}

const expectRawEnvelope = (res: RawResponse, status: number) => {
  expect({ status: res.status, body: res.body }).toMatchObject({ status })
  expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE)
  expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]+$/)
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body))
  const body = JSON.parse(res.body)
  expect(Object.keys(body).sort()).toEqual(['error', 'message'])
  expect(typeof body.error).toBe('string')
  expect(body.error.length).toBeGreaterThan(0)
  expect(typeof body.message).toBe('string')
  return body as { error: string; message: string }
}

describe('oversized and malformed requests over a real socket', () => {
  let ctx: TestContext
  let port: number
  let auth: string
  let other: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    auth = (await buildApiKey(ctx.database.db)).authorization
    other = (await buildApiKey(ctx.database.db, { role: 'viewer' })).authorization
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    port = (ctx.app.server.address() as AddressInfo).port
  })
  afterAll(() => ctx.close())

  const get = (target: string, extraHeaders = '') =>
    `GET ${target} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\n${extraHeaders}Connection: close\r\n\r\n`

  it('answers a sound request on the same socket setup with 200, as a control', async () => {
    const res = await exchange(port, get('/api/v1/forms'))
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body)).toEqual({
      data: [],
      meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 },
    })
  })

  it.each([
    ['in the query string', `/api/v1/forms?q=${'a'.repeat(10_240)}`, true],
    ['in a path parameter', `/api/v1/forms/form_${'x'.repeat(10_240)}/submissions`, true],
    ['on an unknown path', `/api/v1/${'x'.repeat(10_240)}`, true],
    ['outside the API', `/${'x'.repeat(10_240)}`, false],
  ])(
    "answers a 10 KB URL %s with the 414 envelope (with the key's rate limits: %s)",
    async (_, target, counted) => {
      const res = await exchange(port, get(target))
      expect(expectRawEnvelope(res, 414).error).toBe('uri_too_long')
      expect(res.headers['x-ratelimit-limit'] !== undefined).toBe(counted)
      expect(res.headers['x-ratelimit-remaining'] !== undefined).toBe(counted)
    },
  )

  it('answers a 20 KB header with the 431 envelope', async () => {
    const res = await exchange(port, get('/api/v1/forms', `X-Padding: ${'a'.repeat(20_480)}\r\n`))
    expect(expectRawEnvelope(res, 431).error).toBe('request_header_fields_too_large')
  })

  it('answers many headers adding up to more than 16 KB with the 431 envelope', async () => {
    const headers = Array.from({ length: 40 }, (_, i) => `X-H${i}: ${'b'.repeat(500)}\r\n`).join('')
    expectRawEnvelope(await exchange(port, get('/api/v1/forms', headers)), 431)
  })

  it.each([
    ['20 KB', 20_480],
    ['64 KB', 65_536],
  ])('answers a %s URL, which the HTTP parser itself stops, with the 414 envelope', async (_, size) => {
    const res = await exchange(port, get(`/api/v1/forms?q=${'a'.repeat(size)}`))
    expect(expectRawEnvelope(res, 414).error).toBe('uri_too_long')
  })

  it.each([
    ['a garbage request line', 'HELLO WORLD\r\n\r\n'],
    ['binary noise', Buffer.from([0, 1, 2, 3, 255, 254, 13, 10, 13, 10])],
    ['an unknown HTTP version', 'GET /api/v1/forms HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['a header line without a colon', 'GET /api/v1/forms HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n'],
    ['a space inside the request target', 'GET /api/v1/ forms HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['an invalid Content-Length', 'GET /api/v1/forms HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /api/v1/forms HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
  ])('answers %s with the 400 envelope', async (_, payload) => {
    expect(expectRawEnvelope(await exchange(port, payload), 400).error).toBe('bad_request')
  })

  it("answers an HTTP/1.1 request without a Host header with the 400 envelope, with the key's rate limits", async () => {
    const res = await exchange(port, `GET /api/v1/forms HTTP/1.1\r\nAuthorization: ${auth}\r\n\r\n`)
    const body = expectRawEnvelope(res, 400)
    expect(body.error).toBe('bad_request')
    expect(body.message).toContain('Host')
    expect(res.headers['x-ratelimit-limit']).toBe(String(GENEROUS_LIMITS.perHour))
  })

  describe('an Authorization header sent more than once', () => {
    const twice = (method: string, first: string, second: string) =>
      `${method} /api/v1/forms HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${first}\r\nauthorization: ${second}\r\nConnection: close\r\n\r\n`

    it.each([
      ['a valid key, then another valid key', () => [auth, other]],
      ['a valid key, then garbage', () => [auth, 'Basic Zm9vOmJhcg==']],
      ['garbage, then a valid key', () => ['Bearer lk_live_unknown', auth]],
      ['the same valid key twice', () => [auth, auth]],
      ['a valid key, then an empty value', () => [auth, '']],
    ])('is refused with 401 invalid_authorization_format: %s', async (_, values) => {
      const [first, second] = values() as [string, string]
      const res = await exchange(port, twice('GET', first, second))
      const body = expectRawEnvelope(res, 401)
      expect(body).toEqual({
        error: 'invalid_authorization_format',
        message:
          "The Authorization header was sent more than once: send it once, in the format 'Bearer <API_KEY>'",
      })
      expect(res.headers['www-authenticate']).toBe('Bearer')
      // Refused before any key is looked at: no key's quota is counted or reported.
      expect(res.headers['x-ratelimit-remaining']).toBeUndefined()
    })

    it('answers any other method with 405, as it does every request it cannot authenticate', async () => {
      const res = await exchange(port, twice('DELETE', auth, other))
      expect(expectRawEnvelope(res, 405).error).toBe('method_not_allowed')
    })
  })

  it('serves an HTTP/1.0 request without a Host header, which that version allows', async () => {
    const res = await exchange(port, `GET /api/v1/forms HTTP/1.0\r\nAuthorization: ${auth}\r\n\r\n`)
    expect(res.status).toBe(200)
  })

  it.each([
    ['an authority', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
    ['a path', 'CONNECT /api/v1/forms HTTP/1.1\r\nHost: localhost\r\n\r\n'],
  ])('answers CONNECT to %s with the 405 envelope instead of closing the socket', async (_, payload) => {
    const res = await exchange(port, payload)
    expect(expectRawEnvelope(res, 405).error).toBe('method_not_allowed')
    expect(res.headers.allow).toBe('GET, HEAD')
  })

  it("answers a malformed percent-encoding with the 400 envelope, with the key's rate limits", async () => {
    const res = await exchange(port, get('/api/v1/forms/%E0%A4%A/submissions'))
    expectRawEnvelope(res, 400)
    expect(res.headers['x-ratelimit-limit']).toBe(String(GENEROUS_LIMITS.perHour))
  })

  it('keeps serving after rejecting malformed requests', async () => {
    await exchange(port, 'HELLO WORLD\r\n\r\n')
    await exchange(port, get('/api/v1/forms', `X-Padding: ${'a'.repeat(20_480)}\r\n`))
    expect((await exchange(port, get('/api/v1/forms'))).status).toBe(200)
  })
})

describe('oversized and malformed requests with ERROR_STYLE=phrase', () => {
  let ctx: TestContext
  let port: number
  beforeAll(async () => {
    ctx = await createTestContext({ errorStyle: 'phrase' })
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    port = (ctx.app.server.address() as AddressInfo).port
  })
  afterAll(() => ctx.close())

  it('answers with phrase-form errors in the same envelope', async () => {
    const long = await exchange(
      port,
      `GET /api/v1/forms?q=${'a'.repeat(10_240)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    )
    expect(expectRawEnvelope(long, 414).error).not.toBe('uri_too_long')
    const big = await exchange(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_480)}\r\n\r\n`)
    expect(expectRawEnvelope(big, 431).error).not.toBe('request_header_fields_too_large')
    const garbage = await exchange(port, 'HELLO WORLD\r\n\r\n')
    expect(expectRawEnvelope(garbage, 400).error).not.toBe('bad_request')
  })
})
