import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { serveMetrics } from '../../src/http/metrics.js'
import { createTestContext, type TestContext } from '../harness.js'

const TOKEN = 'a-long-scrape-token-0123456789'

describe('who may read /metrics', () => {
  let ctx: TestContext
  const apps: FastifyInstance[] = []
  const closers: (() => Promise<void>)[] = []

  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterEach(async () => {
    for (const close of closers.splice(0)) await close()
    for (const app of apps.splice(0)) await app.close()
  })
  afterAll(() => ctx.close())

  /** The app as `lectern serve` builds it with these metrics settings, listening on a real port. */
  async function listening(config: Partial<Pick<Config, 'METRICS_PORT' | 'METRICS_TOKEN'>> = {}) {
    const app = await buildApp({
      config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent', ...config },
      services: ctx.services,
      limiter: ctx.limiter,
      database: ctx.database,
    })
    apps.push(app)
    await app.listen({ port: 0, host: '127.0.0.1' })
    return { app, url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` }
  }

  it('by default serves them to a direct local connection on the API port', async () => {
    const { url } = await listening()
    const res = await fetch(`${url}/metrics`)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('lectern_http_requests_total')
  })

  it('by default answers 404 to another address, and to a request a proxy forwarded', async () => {
    const { app } = await listening()
    const remote = await app.inject({ url: '/metrics', remoteAddress: '203.0.113.9' })
    expect(remote.statusCode).toBe(404)
    expect(remote.json()).toEqual({ error: 'resource_not_found', message: expect.any(String) })
    const forwarded = await app.inject({ url: '/metrics', headers: { 'x-forwarded-for': '203.0.113.9' } })
    expect(forwarded.statusCode).toBe(404)
    expect(forwarded.body).not.toContain('nodejs_version')
  })

  it('with METRICS_TOKEN asks every scraper for the bearer token, from any address', async () => {
    const { app } = await listening({ METRICS_TOKEN: TOKEN })
    const none = await app.inject({ url: '/metrics' })
    expect(none.statusCode).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer')
    expect(none.json().error).toBe('missing_authorization_header')
    const wrong = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}x` } })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.body).not.toContain('lectern_')
    const right = await app.inject({
      url: '/metrics',
      remoteAddress: '203.0.113.9',
      headers: { authorization: `bearer ${TOKEN}` },
    })
    expect(right.statusCode).toBe(200)
    expect(right.body).toContain('lectern_rate_limiter_fallback')
  })

  it('with METRICS_PORT serves them only on their own listener, not on the API port', async () => {
    const { app, url } = await listening({ METRICS_PORT: 9464 })
    expect((await fetch(`${url}/metrics`)).status).toBe(404)
    const separate = await serveMetrics(app.metrics, { host: '127.0.0.1', port: 0, style: 'code' })
    closers.push(() => new Promise((resolve) => separate.server.close(() => resolve())))
    await fetch(`${url}/healthz`)
    const res = await fetch(`${separate.url}/metrics`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/plain')
    expect(await res.text()).toContain(
      'lectern_http_requests_total{method="GET",route="/healthz",status="200"} 1',
    )
    const other = await fetch(`${separate.url}/api/v1/forms`)
    expect(other.status).toBe(404)
    expect(await other.json()).toEqual({ error: 'resource_not_found', message: expect.any(String) })
  })

  it('with both, the separate listener asks for the token too', async () => {
    const { app } = await listening({ METRICS_PORT: 9464, METRICS_TOKEN: TOKEN })
    const separate = await serveMetrics(app.metrics, {
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      style: 'code',
    })
    closers.push(() => new Promise((resolve) => separate.server.close(() => resolve())))
    expect((await fetch(`${separate.url}/metrics`)).status).toBe(401)
    const res = await fetch(`${separate.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(res.status).toBe(200)
  })
})
