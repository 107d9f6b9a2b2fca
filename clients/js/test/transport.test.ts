import { createServer, type Server } from 'node:http'
import { constants, createGzip, gzipSync } from 'node:zlib'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildForm } from '../../../test/factories.js'
import { GENEROUS_LIMITS } from '../../../test/security-suite.js'
import {
  APIConnectionError,
  APITimeoutError,
  type FetchFunction,
  Lectern,
  LecternError,
  RequestAbortedError,
  ServerError,
} from '../src/index.js'
import { type Misbehaving, type RunningLectern, startLectern, startMisbehaving } from './support.js'

/** A `fetch` that records the `If-None-Match` it sent and the status it got, for every request. */
function revalidationLog(): {
  fetch: FetchFunction
  log: { url: string; ifNoneMatch: string | null; status: number }[]
} {
  const log: { url: string; ifNoneMatch: string | null; status: number }[] = []
  return {
    log,
    fetch: async (url, init) => {
      const response = await fetch(url, init)
      const ifNoneMatch = (init.headers as Record<string, string>)['If-None-Match'] ?? null
      log.push({ url: new URL(url).pathname + new URL(url).search, ifNoneMatch, status: response.status })
      return response
    },
  }
}

describe('conditional requests and the last response, against a running server', () => {
  let server: RunningLectern

  beforeAll(async () => {
    server = await startLectern(GENEROUS_LIMITS)
    await buildForm(server.ctx.database.db, {
      id: 'form_1',
      title: 'First',
      createdAt: '2024-01-01T10:00:00Z',
    })
  })
  afterAll(() => server.ctx.close())

  it('revalidates a list it has seen and reuses the remembered body on 304', async () => {
    const { fetch, log } = revalidationLog()
    const client = server.client({ fetch })
    const first = await client.forms.list()
    const second = await client.forms.list()
    expect(second).toEqual(first)
    expect(log.map((entry) => entry.status)).toEqual([200, 304])
    expect(log[0]?.ifNoneMatch).toBeNull()
    expect(log[1]?.ifNoneMatch).toMatch(/^"/)
    expect(client.lastResponse).toMatchObject({ status: 304, requestId: expect.any(String) })
  })

  it('hands out a fresh object on every reuse, so changing one result cannot change the next', async () => {
    const client = server.client()
    const first = await client.forms.list()
    ;(first.data[0] as { title: string }).title = 'changed by the caller'
    const second = await client.forms.list()
    expect(client.lastResponse?.status).toBe(304)
    expect(second.data[0]?.title).toBe('First')
  })

  it('gets the new body once the content has changed', async () => {
    const client = server.client()
    expect((await client.forms.list()).meta.total).toBe(1)
    await buildForm(server.ctx.database.db, {
      id: 'form_2',
      title: 'Second',
      createdAt: '2024-01-02T10:00:00Z',
    })
    const { data } = await client.forms.list()
    expect(client.lastResponse?.status).toBe(200)
    expect(data.map((form) => form.id)).toEqual(['form_1', 'form_2'])
  })

  it('remembers at most etagCacheSize responses, forgetting the least recently used', async () => {
    const { fetch, log } = revalidationLog()
    const client = server.client({ fetch, etagCacheSize: 1 })
    await client.forms.list({ page: 1 })
    await client.forms.list({ page: 2 })
    await client.forms.list({ page: 1 })
    await client.forms.list({ page: 1 })
    expect(log.map((entry) => entry.status)).toEqual([200, 200, 200, 304])
  })

  it('sends no conditional request when etagCacheSize is 0', async () => {
    const { fetch, log } = revalidationLog()
    const client = server.client({ fetch, etagCacheSize: 0 })
    await client.pages.list()
    await client.pages.list()
    expect(log.map((entry) => [entry.status, entry.ifNoneMatch])).toEqual([
      [200, null],
      [200, null],
    ])
  })

  it('reports the last response with its rate-limit state, and none for a response without it', async () => {
    const client = server.client()
    expect(client.lastResponse).toBeNull()
    await client.redirects.list()
    expect(client.lastResponse).toEqual({
      status: 200,
      requestId: expect.any(String),
      rateLimit: { limit: GENEROUS_LIMITS.perHour, remaining: expect.any(Number), reset: expect.any(Number) },
    })
    const stranger = new Lectern({ baseUrl: server.baseUrl, apiKey: 'lk_live_unknown' })
    await stranger.forms.list().catch(() => undefined)
    expect(stranger.lastResponse).toEqual({ status: 401, requestId: expect.any(String), rateLimit: null })
  })
})

describe('requests that get no response', () => {
  let silent: Server
  let silentUrl: string
  const held: { destroy(): void }[] = []

  beforeAll(async () => {
    // A server that accepts requests and never answers, like one stuck behind a dead upstream.
    silent = createServer((request) => held.push(request.socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    silentUrl = `http://127.0.0.1:${(silent.address() as { port: number }).port}`
  })
  afterAll(async () => {
    for (const socket of held) socket.destroy()
    await new Promise<void>((resolve) => silent.close(() => resolve()))
  })

  it('throws an APITimeoutError when no answer comes within timeoutMs', async () => {
    const client = new Lectern({ baseUrl: silentUrl, apiKey: 'lk_live_x', timeoutMs: 50 })
    const error = await client.forms.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(APITimeoutError)
    expect(error).toBeInstanceOf(APIConnectionError)
    expect(error).toBeInstanceOf(LecternError)
    expect(error).toMatchObject({ status: 0, type: 'timeout', requestId: null })
    expect(client.lastResponse).toBeNull()
  })

  it('throws a RequestAbortedError when the caller aborts a request in flight', async () => {
    const client = new Lectern({ baseUrl: silentUrl, apiKey: 'lk_live_x' })
    const controller = new AbortController()
    const listing = client.pages.list({}, { signal: controller.signal })
    const reason = new Error('navigated away')
    setTimeout(() => controller.abort(reason), 20)
    const error = await listing.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RequestAbortedError)
    expect(error).toMatchObject({ status: 0, type: 'aborted', cause: reason })
  })

  it('throws an APIConnectionError when nothing listens', async () => {
    // A port that was just free: bound, closed, and not reused this quickly.
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as { port: number }
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const error = await new Lectern({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'lk_live_x' }).redirects
      .list()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(APIConnectionError)
    expect(error).toMatchObject({ status: 0, type: 'connection_error' })
    expect((error as Error).message).toContain(`127.0.0.1:${port}`)
  })
})

describe('responses that never end or never stop growing', () => {
  let server: Misbehaving | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  /** The call's outcome, or `'still pending'` if it has not settled long after its own timeout. */
  const settle = (call: Promise<unknown>, wait: number) =>
    Promise.race([
      call.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      new Promise((resolve) => setTimeout(() => resolve('still pending'), wait)),
    ])

  it('fails with an APITimeoutError when the body trickles in for longer than timeoutMs', async () => {
    server = await startMisbehaving((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"data":[')
      const timer = setInterval(() => response.write(' '), 100)
      response.on('close', () => clearInterval(timer))
    })
    const client = new Lectern({ baseUrl: server.baseUrl, apiKey: 'lk_live_x', timeoutMs: 300, retry: false })
    const outcome = await settle(client.forms.list(), 10_000)
    expect(outcome).toMatchObject({ error: expect.any(APITimeoutError) })
  })

  it('refuses a gzip body larger than maxResponseBytes once inflated, with a clear error', async () => {
    const page = JSON.stringify({
      data: [],
      meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 },
      padding: ' '.repeat(8 * 1024 * 1024),
    })
    const compressed = gzipSync(page)
    server = await startMisbehaving((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      response.end(compressed)
    })
    const client = new Lectern({
      baseUrl: server.baseUrl,
      apiKey: 'lk_live_x',
      maxResponseBytes: 1024 * 1024,
    })
    const error = await client.forms.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ServerError)
    expect(error).toMatchObject({ status: 200, type: 'unexpected_response' })
    expect((error as Error).message).toContain('maxResponseBytes (1048576 bytes)')
  })

  it('settles within its timeout while an endless gzip body inflates, even if fetch ignores the abort', async () => {
    // Each chunk a few kilobytes on the wire and megabytes once inflated, for as long as the client reads.
    const chunk = Buffer.alloc(4 * 1024 * 1024, 0x20)
    server = await startMisbehaving((_, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      const gzip = createGzip()
      gzip.pipe(response)
      gzip.write('{"data":[')
      let open = true
      response.on('close', () => {
        open = false
        gzip.destroy()
      })
      const pump = () => {
        while (open && gzip.write(chunk)) {}
        if (open) gzip.flush(constants.Z_SYNC_FLUSH, () => setImmediate(pump))
      }
      pump()
    })
    const client = new Lectern({
      baseUrl: server.baseUrl,
      apiKey: 'lk_live_x',
      // A runtime that notices the abort late, or never, while it inflates.
      fetch: (url, { signal: _ignored, ...init }) => fetch(url, init),
      timeoutMs: 500,
      maxResponseBytes: 2 ** 40,
      retry: false,
    })
    const outcome = await settle(client.forms.list(), 20_000)
    expect(outcome).toMatchObject({ error: expect.any(APITimeoutError) })
  })
})
