import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { buildDashboardUser, PASSWORD } from '../admin/support.js'
import { buildApiKey, buildRedirect } from '../factories.js'
import { HttpBrowser, listenLocally, pageText } from '../hardening/http-browser.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { caseFile, insertCaseRedirects } from './support.js'

describe("the dashboard's Flatten chains, over HTTP", () => {
  let ctx: TestContext
  let base: string
  let admin: HttpBrowser

  beforeEach(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    base = await listenLocally(ctx.app)
    const user = await buildDashboardUser(ctx.database.db, { role: 'global_admin' })
    admin = new HttpBrowser(base)
    expect((await admin.signIn(user.email, PASSWORD)).status).toBe(303)
  })
  afterEach(() => ctx.close())

  const tryUrl = async (target: string) =>
    pageText(
      await (await admin.request(`/admin/redirects/apply?target=${encodeURIComponent(target)}`)).text(),
    )

  const flatten = async () => {
    await admin.request('/admin/redirects')
    const res = await admin.post('/admin/redirects/flatten', {})
    expect(res.status).toBe(303)
    return pageText(await (await admin.request('/admin/redirects')).text())
  }

  const apiRedirects = async () => {
    const key = await buildApiKey(ctx.database.db, { role: 'editor' })
    const res = await fetch(`${base}/api/v1/page-builder/redirects?pageSize=100`, {
      headers: { authorization: key.authorization },
    })
    const body = (await res.json()) as { data: { fromPath: string; toPath: string; type: string }[] }
    return Object.fromEntries(body.data.map((r) => [r.fromPath, `${r.toPath} ${r.type}`]))
  }

  it('keeps a chain through a temporary redirect answering 302, and says in the audit log what changed', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/chain-a', toPath: '/chain-b', type: 'permanent' })
    await buildRedirect(ctx.database.db, { fromPath: '/chain-b', toPath: '/chain-c', type: 'temporary' })
    expect(await tryUrl('/chain-a')).toContain('/chain-a is redirected with 302 to /chain-c .')

    const page = await flatten()
    expect(await tryUrl('/chain-a')).toContain('/chain-a is redirected with 302 to /chain-c .')
    expect(await apiRedirects()).toEqual({
      '/chain-a': '/chain-c temporary',
      '/chain-b': '/chain-c temporary',
    })
    expect(page).toContain('Flattened: 1 redirect now points straight at the end of its chain.')
    expect(page).toContain('It is now temporary (302), as a link of its chain was')

    const audit = await ctx.services.audit.recent(1)
    expect(audit[0]).toMatchObject({
      action: 'redirects.flattened',
      detail: {
        changed: 1,
        madeTemporary: 1,
        redirects: ['/chain-a: /chain-b permanent → /chain-c temporary'],
      },
    })
    const log = pageText(await (await admin.request('/admin/audit')).text())
    expect(log).toContain('/chain-a: /chain-b permanent → /chain-c temporary')
  })

  it('keeps a chain of permanent redirects permanent', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/p1', toPath: '/p2' })
    await buildRedirect(ctx.database.db, { fromPath: '/p2', toPath: '/p3' })
    const page = await flatten()
    expect(page).toContain('Flattened: 1 redirect now points straight at the end of its chain.')
    expect(page).not.toContain('temporary')
    expect(await tryUrl('/p1')).toContain('/p1 is redirected with 301 to /p3 .')
    expect(await apiRedirects()).toEqual({ '/p1': '/p3 permanent', '/p2': '/p3 permanent' })
  })

  it('changes no answer of the shared redirect cases, so every export stays the same', async () => {
    await insertCaseRedirects(ctx.database.db)
    const exported = async (format: string) =>
      (await admin.request(`/admin/redirects/export?format=${format}`)).text()
    const answers = async () =>
      Promise.all(caseFile.cases.map(async (c) => `${c.target}: ${await tryUrl(c.target)}`))
    const before = { json: await exported('json'), nginx: await exported('nginx'), answers: await answers() }
    const page = await flatten()
    const after = { json: await exported('json'), nginx: await exported('nginx'), answers: await answers() }
    expect(after).toEqual(before)
    expect(page).toContain('Flattened: 4 redirects now point straight at the end of its chain.')
    expect(page).toContain('1 of them is now temporary (302)')
    // `/mixed-x → /mixed-a` (permanent) led through a temporary link: it answered 302 and still does.
    expect((await apiRedirects())['/mixed-x']).toBe('/mixed-c temporary')
  })
})
