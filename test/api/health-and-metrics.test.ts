import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

describe('health, readiness and metrics', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await createTestContext({ perHour: 1000, perSecond: 2 })
  })
  afterEach(() => ctx.close())

  it('reports the process alive on /healthz and ready on /readyz without an API key', async () => {
    const health = await ctx.app.inject({ url: '/healthz' })
    expect(health.statusCode).toBe(200)
    expect(health.json()).toEqual({ status: 'ok' })
    const ready = await ctx.app.inject({ url: '/readyz' })
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toMatchObject({ status: 'ready', database: 'ok' })
    expect(ready.json().rateLimits).toBe(ctx.dialect === 'postgres' ? 'redis' : 'memory')
  })

  it('says not ready, with the 503 envelope, once the database is gone, while /healthz stays up', async () => {
    await ctx.database.close()
    const ready = await ctx.app.inject({ url: '/readyz' })
    expect(ready.statusCode).toBe(503)
    expect(ready.json()).toEqual({ error: 'service_unavailable', message: expect.any(String) })
    expect(ready.headers['retry-after']).toMatch(/^\d+$/)
    expect((await ctx.app.inject({ url: '/healthz' })).statusCode).toBe(200)
  })

  it('counts requests by route pattern and status, times them, and counts rate-limit rejections', async () => {
    const key = await buildApiKey(ctx.database.db)
    const form = await buildForm(ctx.database.db)
    const headers = { authorization: key.authorization }
    await ctx.app.inject({ url: `/api/v1/forms/${form.id}/submissions`, headers })
    await ctx.app.inject({ url: '/api/v1/forms', headers })
    const limited = await ctx.app.inject({ url: '/api/v1/forms', headers })
    expect(limited.statusCode).toBe(429)

    // inject() comes from 127.0.0.1: a direct local connection, which the default metrics access serves
    // (who else may read them: test/hardening/metrics-access.test.ts).
    const page = await ctx.app.inject({ url: '/metrics' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toContain('text/plain')
    const text = page.body
    expect(text).toContain(
      'lectern_http_requests_total{method="GET",route="/api/v1/forms/:id/submissions",status="200"} 1',
    )
    expect(text).toContain('lectern_http_requests_total{method="GET",route="/api/v1/forms",status="200"} 1')
    expect(text).toContain('lectern_http_requests_total{method="GET",route="/api/v1/forms",status="429"} 1')
    expect(text).not.toContain(form.id)
    expect(text).toMatch(
      /lectern_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/v1\/forms"\} \d/,
    )
    expect(text).toContain('lectern_rate_limit_rejections_total 1')
    expect(text).toContain('lectern_rate_limiter_fallback 0')
    expect(text).toContain(`lectern_rate_limiter_shared ${ctx.dialect === 'postgres' ? 1 : 0}`)
    expect(text).toMatch(/lectern_db_pool_connections\{state="total"\} \d+/)
    expect(text).not.toContain(key.plainKey)
  })
})
