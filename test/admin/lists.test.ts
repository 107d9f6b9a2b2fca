import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pageNumbers } from '../../src/admin/views/components.js'
import { randomBase62 } from '../../src/ids.js'
import { pageWindow } from '../../src/services/listing.js'
import { buildApiKey, buildForm, buildPage, buildRedirect, buildSubmission, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { type DashboardClient, rowText, signedInClient, textOf } from './support.js'

/** The HTML ids of a list's rows with `prefix`, in the order shown. */
const rowIds = (res: LightMyRequestResponse, prefix: string) =>
  [...res.body.matchAll(new RegExp(`<tr id="${prefix}-([^"]+)"`, 'g'))].map((match) => match[1])

const at = (second: number) =>
  new Date(Date.UTC(2024, 0, 1, 0, 0, second)).toISOString().replace('.000Z', 'Z')

describe('dashboard lists', () => {
  let ctx: TestContext
  let admin: DashboardClient

  beforeAll(async () => {
    ctx = await createTestContext()
    admin = (await signedInClient(ctx.app, ctx.database.db)).client
  })
  afterAll(() => ctx.close())

  it('numbers pages around the current one and leaves out the rest', () => {
    expect(pageNumbers(1, 1)).toEqual([1])
    expect(pageNumbers(1, 4)).toEqual([1, 2, 3, 4])
    expect(pageNumbers(500, 1000)).toEqual([1, null, 498, 499, 500, 501, 502, null, 1000])
    expect(pageNumbers(4, 9)).toEqual([1, 2, 3, 4, 5, 6, null, 9])
  })

  it('reads a page in the second half of a list from its end, skipping at most half the list', () => {
    expect(pageWindow({ page: 1, size: 20 }, 1000)).toEqual({ reverse: false, offset: 0, limit: 20 })
    expect(pageWindow({ page: 25, size: 20 }, 1000)).toEqual({ reverse: false, offset: 480, limit: 20 })
    expect(pageWindow({ page: 26, size: 20 }, 1000)).toEqual({ reverse: true, offset: 480, limit: 20 })
    expect(pageWindow({ page: 50, size: 20 }, 1000)).toEqual({ reverse: true, offset: 0, limit: 20 })
    // A short last page: its rows are the first ones from the end.
    expect(pageWindow({ page: 3, size: 20 }, 45)).toEqual({ reverse: true, offset: 0, limit: 5 })
    expect(pageWindow({ page: 4, size: 20 }, 45)).toEqual({ reverse: false, offset: 60, limit: 0 })
  })

  it('gives every row of a list exactly once across its pages, in order, in both directions', async () => {
    const tag = randomBase62(6).toLowerCase()
    const made = []
    for (let i = 0; i < 45; i++)
      made.push(await buildRedirect(ctx.database.db, { fromPath: `/${tag}/${i}`, createdAt: at(i) }))
    for (const sort of ['oldest', 'newest']) {
      const seen = []
      for (const page of [1, 2, 3])
        seen.push(
          ...rowIds(await admin.get(`/admin/redirects?q=${tag}&sort=${sort}&page=${page}`), 'redirect'),
        )
      const expected = made.map((row) => row.id)
      expect(seen).toEqual(sort === 'oldest' ? expected : expected.reverse())
    }
  })

  it('searches redirects by either path, filters them by status and sorts them by path', async () => {
    const tag = randomBase62(6).toLowerCase()
    const b = await buildRedirect(ctx.database.db, {
      fromPath: `/m-${tag}-b`,
      toPath: '/x',
      createdAt: at(1),
    })
    const a = await buildRedirect(ctx.database.db, {
      fromPath: `/m-${tag}-a`,
      toPath: '/y',
      active: false,
      createdAt: at(2),
    })
    const c = await buildRedirect(ctx.database.db, {
      fromPath: '/elsewhere',
      toPath: `/${tag}-c`,
      createdAt: at(3),
    })
    await buildRedirect(ctx.database.db)

    const all = await admin.get(`/admin/redirects?q=${tag}`)
    expect(all.statusCode).toBe(200)
    expect(rowIds(all, 'redirect')).toEqual([b.id, a.id, c.id])
    expect(textOf(all)).toContain('3 redirects match')

    const byPath = await admin.get(`/admin/redirects?q=${tag.toUpperCase()}&sort=from`)
    expect(rowIds(byPath, 'redirect')).toEqual([c.id, a.id, b.id])

    const inactive = await admin.get(`/admin/redirects?q=${tag}&filter=inactive`)
    expect(rowIds(inactive, 'redirect')).toEqual([a.id])
    // The controls show the view the address asked for.
    expect(inactive.body).toContain(`value="${tag}"`)
    expect(inactive.body).toMatch(/<option value="inactive" selected>/)
  })

  it('takes % and _ in a search literally', async () => {
    const tag = randomBase62(6).toLowerCase()
    const literal = await buildRedirect(ctx.database.db, { fromPath: `/${tag}/50%_off` })
    await buildRedirect(ctx.database.db, { fromPath: `/${tag}/500-off` })
    const res = await admin.get(`/admin/redirects?q=${encodeURIComponent(`${tag}/50%_`)}`)
    expect(rowIds(res, 'redirect')).toEqual([literal.id])
  })

  it('pages a view at the chosen size, with numbered pages and a jump that keep the view', async () => {
    const tag = randomBase62(6).toLowerCase()
    const made = []
    for (let i = 0; i < 55; i++)
      made.push(await buildRedirect(ctx.database.db, { fromPath: `/${tag}/${i}`, createdAt: at(i) }))
    const second = await admin.get(`/admin/redirects?q=${tag}&size=50&page=2`)
    expect(rowIds(second, 'redirect')).toEqual(made.slice(50).map((row) => row.id))
    expect(textOf(second)).toContain('Page 2 of 2')
    expect(second.body).toContain(`href="/admin/redirects?q=${tag}&amp;size=50"`)
    // The jump is a GET form to the list, carrying the search and size along.
    const jump = /<form method="get" action="\/admin\/redirects" class="jump">([\s\S]*?)<\/form>/.exec(
      second.body,
    )?.[1]
    expect(jump).toContain(`name="q" value="${tag}"`)
    expect(jump).toContain('name="size" value="50"')
    expect(jump).toContain('name="page"')

    const newest = await admin.get(`/admin/redirects?q=${tag}&sort=newest&size=20&page=3`)
    expect(rowIds(newest, 'redirect')).toEqual(
      made
        .slice(0, 15)
        .reverse()
        .map((row) => row.id),
    )
  })

  it('sends a page past the end of a view to its last page, keeping the view', async () => {
    const tag = randomBase62(6).toLowerCase()
    await buildRedirect(ctx.database.db, { fromPath: `/${tag}` })
    const res = await admin.get(`/admin/redirects?q=${tag}&sort=to&page=9`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/admin/redirects?q=${tag}&sort=to`)
    expect(textOf(await admin.get(res.headers.location as string))).toContain('There is no page 9')
  })

  it('shows the whole list, and why, when a search cannot be used', async () => {
    const res = await admin.get('/admin/redirects?q=%00bad')
    expect(res.statusCode).toBe(200)
    expect(textOf(res)).toContain('The search must not contain NUL')
    expect(textOf(res)).toContain('The search was not used.')
    const long = await admin.get(`/admin/users?q=${'a'.repeat(201)}`)
    expect(textOf(long)).toContain('The search must be at most 200 characters. The search was not used.')
  })

  it('comes back to the same view after switching a redirect off from it', async () => {
    const tag = randomBase62(6).toLowerCase()
    const redirect = await buildRedirect(ctx.database.db, { fromPath: `/${tag}` })
    await admin.get(`/admin/redirects?q=${tag}&sort=from`)
    const res = await admin.post(`/admin/redirects/${redirect.id}/active`, {
      active: 'false',
      q: tag,
      sort: 'from',
      page: '1',
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/admin/redirects?q=${tag}&sort=from#redirect-${redirect.id}`)
  })

  it('filters users by role and status, and searches their emails', async () => {
    const tag = randomBase62(6).toLowerCase()
    const editor = await buildUser(ctx.database.db, { email: `${tag}-ed@example.com`, role: 'editor' })
    const viewer = await buildUser(ctx.database.db, {
      email: `${tag}-vi@example.com`,
      role: 'viewer',
      disabled: true,
    })
    expect(rowIds(await admin.get(`/admin/users?q=${tag}`), 'user')).toEqual([editor.id, viewer.id])
    expect(rowIds(await admin.get(`/admin/users?q=${tag}&filter=viewer`), 'user')).toEqual([viewer.id])
    expect(rowIds(await admin.get(`/admin/users?q=${tag}&filter=disabled`), 'user')).toEqual([viewer.id])
    expect(rowIds(await admin.get(`/admin/users?q=${tag}&filter=active`), 'user')).toEqual([editor.id])
    const none = await admin.get(`/admin/users?q=${tag}&filter=global_admin`)
    expect(textOf(none)).toContain('No user matches')
  })

  it('filters API keys by status, an expired key as expired rather than active', async () => {
    const tag = randomBase62(6).toLowerCase()
    const working = await buildApiKey(ctx.database.db, { name: `${tag} working` })
    const expired = await buildApiKey(ctx.database.db, { name: `${tag} expired` })
    await ctx.database.db
      .updateTable('api_keys')
      .set({ expires_at: '2020-01-01T00:00:00Z' })
      .where('id', '=', expired.id)
      .execute()
    const revoked = await buildApiKey(ctx.database.db, { name: `${tag} revoked`, revoked: true })
    const ids = async (query: string) => rowIds(await admin.get(`/admin/keys?q=${tag}${query}`), 'key')
    expect(new Set(await ids(''))).toEqual(new Set([working.id, expired.id, revoked.id]))
    expect(await ids('&filter=active')).toEqual([working.id])
    expect(await ids('&filter=expired')).toEqual([expired.id])
    expect(await ids('&filter=revoked')).toEqual([revoked.id])
    expect(await ids('&sort=name')).toEqual([expired.id, revoked.id, working.id])
  })

  it('finds forms by title or description, those with unread submissions, and counts each one', async () => {
    const tag = randomBase62(6).toLowerCase()
    const quiet = await buildForm(ctx.database.db, { title: `Zebra ${tag}`, createdAt: at(1) })
    const busy = await buildForm(ctx.database.db, {
      title: 'Apple',
      description: `About ${tag}`,
      createdAt: at(2),
    })
    await buildSubmission(ctx.database.db, { formId: busy.id, isRead: false })
    await buildSubmission(ctx.database.db, { formId: busy.id, isRead: true })
    await buildSubmission(ctx.database.db, { formId: quiet.id, isRead: true })
    const ids = async (query: string) => rowIds(await admin.get(`/admin/forms?q=${tag}${query}`), 'form')
    expect(await ids('')).toEqual([quiet.id, busy.id])
    expect(await ids('&sort=title')).toEqual([busy.id, quiet.id])
    expect(await ids('&filter=unread')).toEqual([busy.id])
    const res = await admin.get(`/admin/forms?q=${tag}&filter=unread`)
    expect(rowText(res, `form-${busy.id}`)).toContain('Apple About')
    expect(res.body).toContain('aria-label="1 unread submissions to Apple"')
    expect(res.body).toContain('aria-label="2 submissions to Apple"')
  })

  it('finds pages by title, slug or path, and tells drafts from published pages', async () => {
    const tag = randomBase62(6).toLowerCase()
    const draft = await buildPage(ctx.database.db, { path: `/b/${tag}`, published: false, createdAt: at(1) })
    const live = await buildPage(ctx.database.db, { path: `/a/${tag}`, title: 'Live', createdAt: at(2) })
    const ids = async (query: string) => rowIds(await admin.get(`/admin/pages?q=${tag}${query}`), 'page')
    expect(await ids('')).toEqual([draft.id, live.id])
    expect(await ids('&sort=path')).toEqual([live.id, draft.id])
    expect(await ids('&filter=draft')).toEqual([draft.id])
    expect(await ids('&filter=published')).toEqual([live.id])
  })

  it('lets every list be bookmarked: the plain address is the default view', async () => {
    await buildPage(ctx.database.db)
    for (const list of [
      '/admin/forms',
      '/admin/pages',
      '/admin/redirects',
      '/admin/users',
      '/admin/keys',
      '/admin/audit',
    ]) {
      const res = await admin.get(list)
      expect(res.statusCode).toBe(200)
      expect(res.body).toContain(`<form method="get" action="${list}" class="filters" role="search"`)
    }
  })

  it('gives the audit log the controls of every list: a search, an action filter, an order, a page size and numbered pages', async () => {
    const tag = randomBase62(6).toLowerCase()
    for (let i = 0; i < 25; i++)
      await ctx.services.redirects.createRedirect({ fromPath: `/${tag}/${i}`, toPath: '/audit-target' })
    await ctx.services.redirects.createRedirect({ fromPath: `/${tag}/off`, toPath: '/x', isActive: false })
    const ids = async (query: string) =>
      rowIds(await admin.get(`/admin/audit?q=${tag}${query}`), 'audit').map(Number)

    const first = await admin.get(`/admin/audit?q=${tag}`)
    expect(first.statusCode).toBe(200)
    const controls = /<form method="get" action="\/admin\/audit" class="filters"[\s\S]*?<\/form>/.exec(
      first.body,
    )?.[0]
    for (const name of ['q', 'filter', 'sort', 'size']) expect(controls).toContain(`name="${name}"`)
    for (const label of ['Search', 'Action', 'Order', 'Per page'])
      expect(controls).toContain(`>${label}</label>`)
    expect(textOf(first)).toContain('26 entries match')
    expect(textOf(first)).toContain('Page 1 of 2')
    expect(first.body).toContain(`href="/admin/audit?q=${tag}&amp;page=2"`)
    expect(first.body).toMatch(/<form method="get" action="\/admin\/audit" class="jump">/)

    // Newest first by default; oldest first reads the same entries the other way round, across pages.
    const newest = [...(await ids('')), ...(await ids('&page=2'))]
    expect(newest).toHaveLength(26)
    expect(newest).toEqual([...newest].sort((a, b) => b - a))
    const oldest = [...(await ids('&sort=oldest')), ...(await ids('&sort=oldest&page=2'))]
    expect(oldest).toEqual([...newest].reverse())
    expect(await ids('&size=50')).toEqual(newest)

    // The search looks in the detail (the paths) and the target; the filter keeps one action.
    expect(await ids('&filter=redirect.created&size=50')).toEqual(newest)
    const none = await admin.get(`/admin/audit?q=${tag}&filter=key.created`)
    expect(textOf(none)).toContain('No entries match')
    const byActor = await ids('&size=100')
    expect(rowIds(await admin.get('/admin/audit?q=CLI&size=100'), 'audit').map(Number)).toEqual(
      expect.arrayContaining(byActor),
    )

    const past = await admin.get(`/admin/audit?q=${tag}&sort=oldest&page=9`)
    expect(past.statusCode).toBe(303)
    expect(past.headers.location).toBe(`/admin/audit?q=${tag}&sort=oldest&page=2`)
    // An address of the log's older filters opens the same entries.
    const old = await admin.get('/admin/audit?action=redirect.created&actor=cli')
    expect(old.statusCode).toBe(303)
    expect(old.headers.location).toBe('/admin/audit?q=cli&filter=redirect.created')
  })
})
