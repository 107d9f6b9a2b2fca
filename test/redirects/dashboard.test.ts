import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { exportRedirects } from '../../src/services/redirects/exports.js'
import { createRedirectMatcher } from '../../src/services/redirects/matcher.js'
import { type DashboardClient, signedInClient, textOf } from '../admin/support.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { caseFile, insertCaseRedirects } from './support.js'

describe('applying redirects from the dashboard', () => {
  let ctx: TestContext
  let viewer: DashboardClient

  // One site for the file (signing in checks a password at production scrypt cost); the one test
  // that adds a redirect takes it away again.
  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    await insertCaseRedirects(ctx.database.db)
    viewer = (await signedInClient(ctx.app, ctx.database.db, 'viewer')).client
  })
  afterAll(() => ctx.close())

  it('links the redirects screen to the apply page', async () => {
    const res = await viewer.get('/admin/redirects')
    expect(res.body).toContain('href="/admin/redirects/apply"')
  })

  it('downloads the nginx export as an attachment, the same as the CLI writes', async () => {
    const res = await viewer.get('/admin/redirects/export?format=nginx')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-disposition']).toBe('attachment; filename="redirects.nginx.conf"')
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(res.body).toBe(
      [...exportRedirects('nginx', createRedirectMatcher(caseFile.redirects).rules())].join(''),
    )
  })

  it('downloads the Cloudflare export with the host given, and explains when it is missing', async () => {
    const missing = await viewer.get('/admin/redirects/export?format=cloudflare')
    expect(missing.statusCode).toBe(400)
    expect(textOf(missing)).toContain("the cloudflare format needs the site's host name")
    const res = await viewer.get('/admin/redirects/export?format=cloudflare&host=www.example.com')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-disposition']).toBe('attachment; filename="cloudflare-bulk-redirects.csv"')
    expect(res.body.split('\n')[0]).toBe('www.example.com/old,/new,301,TRUE,FALSE,FALSE,FALSE')
  })

  it('refuses an unknown format with a page saying which exist', async () => {
    const res = await viewer.get('/admin/redirects/export?format=iis')
    expect(res.statusCode).toBe(400)
    expect(textOf(res)).toContain(
      'Choose an export format: csv, json, nginx, apache, caddy, netlify, vercel, cloudflare.',
    )
  })

  it('answers a tried URL as the matcher does, with the query carried over', async () => {
    const res = await viewer.get(`/admin/redirects/apply?target=${encodeURIComponent('/chain-a?x=1')}`)
    expect(res.statusCode).toBe(200)
    expect(textOf(res)).toContain('/chain-a?x=1 is redirected with 301 to /chain-c?x=1 .')
    const none = await viewer.get(`/admin/redirects/apply?target=${encodeURIComponent('/old/')}`)
    expect(textOf(none)).toContain('/old/ is not redirected: it is served as usual.')
  })

  it('shows a change on the very next try', async () => {
    await viewer.get('/admin/redirects/apply?target=%2Fbrand-new')
    const added = await ctx.services.redirects.createRedirect({ fromPath: '/brand-new', toPath: '/temp-old' })
    onTestFinished(async () => {
      await ctx.services.redirects.deleteRedirect(added.redirect.id)
    })
    const res = await viewer.get('/admin/redirects/apply?target=%2Fbrand-new')
    expect(textOf(res)).toContain('/brand-new is redirected with 302 to /temp-new .')
  })

  it('keeps the apply page and the downloads behind sign-in', async () => {
    const anonymous = await ctx.app.inject({ method: 'GET', url: '/admin/redirects/export?format=nginx' })
    expect(anonymous.statusCode).not.toBe(200)
    expect(anonymous.body).not.toContain('location =')
  })
})
