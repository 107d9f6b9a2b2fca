import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { docsContentSecurityPolicy } from '../../src/http/docs/reference.js'
import { createTestContext, type TestContext } from '../harness.js'

const EXTERNAL_URL = /(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i

describe('the API reference page at /docs', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestContext()
    // What an app-wide security-header plugin (helmet) does: a strict policy on every response.
    ctx.app.addHook('onRequest', async (_request, reply) => {
      reply.raw.setHeader('Content-Security-Policy', "default-src 'self'; script-src 'self'")
    })
  })
  afterAll(() => ctx.close())

  it('redirects /docs to /docs/', async () => {
    const res = await ctx.app.inject({ url: '/docs' })
    expect(res.statusCode).toBe(301)
    expect(res.headers.location).toBe('/docs/')
  })

  it('serves an HTML page, without an API key, that loads everything from this server', async () => {
    const res = await ctx.app.inject({ url: '/docs/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.body).toContain('<title>Lectern API reference</title>')
    expect(res.body).not.toMatch(EXTERNAL_URL)
    expect(res.body).not.toMatch(/https?:\/\//)
    const scripts = [...res.body.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map(([, src]) => src)
    expect(scripts).toEqual(['js/scalar.js'])
    // The reference reads the document this server generates.
    expect(res.body).toContain('"url": "/openapi.json"')
  })

  it('turns off every feature that would call a third party', async () => {
    const { body } = await ctx.app.inject({ url: '/docs/' })
    expect(body).toContain('"withDefaultFonts": false')
    expect(body).toContain('"telemetry": false')
    expect(body).toMatch(/"agent": \{\s*"disabled": true\s*\}/)
  })

  it('serves the renderer itself from this process', async () => {
    const res = await ctx.app.inject({ url: '/docs/js/scalar.js' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8')
    expect(res.body.length).toBeGreaterThan(100_000)
    // The bundle names Scalar's CDN only as the default of its server-side renderer's `cdn` option,
    // which this page does not use; it must load no script or stylesheet from there (the browser
    // test proves that no request leaves this server).
    expect(res.body).not.toMatch(/https:\/\/cdn\.jsdelivr\.net[^"'`\s]*\.(?:js|css)\b/)
  })

  it('sets its own Content-Security-Policy, allowing this server only and the inline configuration by hash', async () => {
    const res = await ctx.app.inject({ url: '/docs/' })
    const policy = String(res.headers['content-security-policy'])
    expect(policy).toBe(docsContentSecurityPolicy(res.body))
    expect(policy).toContain("default-src 'self'")
    expect(policy).toContain("connect-src 'self'")
    expect(policy).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'/)
    expect(policy).not.toMatch(/https?:|\*/)
  })

  it('keeps the policy of the rest of the app for other pages', async () => {
    const res = await ctx.app.inject({ url: '/healthz' })
    expect(res.headers['content-security-policy']).toBe("default-src 'self'; script-src 'self'")
  })
})
