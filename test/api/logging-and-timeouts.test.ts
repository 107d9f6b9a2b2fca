import { connect } from 'node:net'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { collectedLines } from '../log-lines.js'

describe('logs', () => {
  let ctx: TestContext
  afterEach(() => ctx.close())

  it('never write an API key or cookie, and tie a 500 to its request id without leaking it to the client', async () => {
    const { text, lines, stream } = collectedLines()
    ctx = await createTestContext({ logLevel: 'trace', logStream: stream })
    const key = await buildApiKey(ctx.database.db)
    await buildForm(ctx.database.db)
    const headers = { authorization: key.authorization, cookie: 'session=top-secret-cookie' }

    expect((await ctx.app.inject({ url: '/api/v1/forms', headers })).statusCode).toBe(200)
    // Moved rather than dropped: other tables (spam, kept counts) still refer to it.
    await sql`ALTER TABLE forms RENAME TO forms_moved`.execute(ctx.database.db)
    // A page not served before, so no cached response can answer it.
    const failed = await ctx.app.inject({ url: '/api/v1/forms?pageSize=7', headers })
    expect(failed.statusCode).toBe(500)
    expect(failed.json()).toEqual({ error: 'internal_error', message: 'An unexpected error occurred' })
    expect(failed.body).not.toMatch(/forms|SQL|stack/i)

    const all = text()
    expect(all).not.toContain(key.plainKey)
    expect(all).not.toContain('top-secret-cookie')
    const errorLine = lines().find((entry) => (entry.level as number) >= 50)
    expect(errorLine?.reqId).toBe(failed.headers['x-request-id'])
    expect((errorLine?.err as { message?: string } | undefined)?.message).toContain('forms')
    // The failed request's own line names it beside its status.
    const completed = lines().find(
      (entry) => entry.reqId === failed.headers['x-request-id'] && entry.msg === 'request completed',
    )
    expect(completed).toMatchObject({ req: { url: '/api/v1/forms?pageSize=7' }, res: { statusCode: 500 } })
  })

  it('write one line per answered request at info, naming the request beside its status and time', async () => {
    const own = await linesOfOneRequest('info', '/api/v1/forms?pageSize=5&token=not-for-logs')
    expect(own).toHaveLength(1)
    expect(own[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'GET', url: '/api/v1/forms?pageSize=5&token=[redacted]' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    })
  })

  it('write no line for a request that succeeds at warn', async () => {
    expect(await linesOfOneRequest('warn', '/api/v1/forms')).toEqual([])
  })

  it('add the arrival of each request at debug', async () => {
    const own = await linesOfOneRequest('debug', '/api/v1/page-builder')
    expect(own.map((entry) => [entry.level, entry.msg])).toEqual([
      [20, 'incoming request'],
      [30, 'request completed'],
    ])
    expect(own[0]?.req).toMatchObject({ method: 'GET', url: '/api/v1/page-builder' })
  })

  /** The lines logged at `level` for one answered GET of `url` by a valid key. */
  async function linesOfOneRequest(level: 'info' | 'debug' | 'warn', url: string) {
    const { lines, stream } = collectedLines()
    ctx = await createTestContext({ logLevel: level, logStream: stream })
    const key = await buildApiKey(ctx.database.db)
    const res = await ctx.app.inject({ url, headers: { authorization: key.authorization } })
    expect(res.statusCode).toBe(200)
    return lines().filter((entry) => entry.reqId === res.headers['x-request-id'])
  }
})

describe('slow clients', () => {
  let ctx: TestContext
  afterEach(() => ctx.close())

  it('get a 408 envelope when their headers never finish', async () => {
    ctx = await createTestContext({
      timeouts: { headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 100 },
    })
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = ctx.app.server.address() as { port: number }
    const response = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write('GET /api/v1/forms HTTP/1.1\r\nHost: x\r\n'),
      )
      let data = ''
      socket.on('data', (chunk) => {
        data += chunk
      })
      socket.on('close', () => resolve(data))
      socket.on('error', reject)
    })
    expect(response).toMatch(/^HTTP\/1\.1 408 /)
    expect(response).toContain('Content-Type: application/json; charset=utf-8')
    const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4))
    expect(body).toEqual({ error: 'request_timeout', message: expect.any(String) })
  })
})
