import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildApiKey, buildRedirect } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectList, GENEROUS_LIMITS, request } from '../security-suite.js'
import { type DashboardClient, rowText, signedInClient, textOf } from './support.js'

interface ApiRedirect {
  id: string
  fromPath: string
  toPath: string
  type: string
  isActive: boolean
}

describe('managing redirects in the dashboard', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let editor: DashboardClient
  let apiKey: string

  // One site and one signed-in editor for the file: signing in checks a password at production
  // scrypt cost. Each test starts with no redirects and no message left from the one before.
  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    editor = (await signedInClient(app, ctx.database.db, 'editor')).client
    apiKey = (await buildApiKey(ctx.database.db, { role: 'viewer' })).authorization
  })
  afterAll(() => ctx.close())
  beforeEach(async () => {
    await ctx.database.db.deleteFrom('redirects').execute()
    await editor.get('/admin')
  })

  const apiRedirects = async (query = '') =>
    expectList<ApiRedirect>(await request(app, `/api/v1/page-builder/redirects?pageSize=100${query}`, apiKey))
      .data
  const create = async (fields: Record<string, string>) => {
    await editor.get('/admin/redirects/new')
    return editor.post('/admin/redirects', { type: 'permanent', isActive: 'true', ...fields })
  }

  it('explains an empty list and offers to create a redirect', async () => {
    const res = await editor.get('/admin/redirects')
    expect(textOf(res)).toContain('No redirects yet')
    expect(res.body).toContain('href="/admin/redirects/new"')
  })

  it('creates a redirect that the API serves at once', async () => {
    const res = await create({ fromPath: ' /old-about ', toPath: '/about', type: 'temporary' })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toMatch(/^\/admin\/redirects\?page=1#redirect-redirect_/)
    const list = await editor.get('/admin/redirects')
    expect(textOf(list)).toContain('Redirect from /old-about to /about created.')
    expect(await apiRedirects()).toEqual([
      expect.objectContaining({
        fromPath: '/old-about',
        toPath: '/about',
        type: 'temporary',
        isActive: true,
      }),
    ])
  })

  it.each([
    ['//evil.example', "From path must not start with '//' (that would redirect to another host)"],
    ['/x?y=1', "From path must not contain a query string ('?')"],
    ['/x#top', "From path must not contain a fragment ('#')"],
    ['/\\evil.example', 'From path must not contain a backslash'],
    ['no-slash', "From path must start with '/'"],
  ])('refuses the from path %s with a clear message', async (fromPath, message) => {
    const res = await create({ fromPath, toPath: '/fine' })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain(message)
    // The form keeps what was typed, so it can be corrected.
    expect(res.body).toContain('value="/fine"')
    expect(await apiRedirects()).toEqual([])
  })

  it('refuses an open redirect to another host as the destination', async () => {
    const res = await create({ fromPath: '/go', toPath: '//evil.example/login' })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain("To path must not start with '//' (that would redirect to another host)")
    expect(await apiRedirects()).toEqual([])
  })

  it('refuses a redirect that would close a loop, even through an inactive redirect', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/a', toPath: '/b' })
    await buildRedirect(ctx.database.db, { fromPath: '/b', toPath: '/c', active: false })
    const res = await create({ fromPath: '/c', toPath: '/a' })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain('This would make a redirect loop (/c → /a → /b → /c)')
    const self = await create({ fromPath: '/self', toPath: '/self' })
    expect(textOf(self)).toContain('This would make a redirect loop (/self → /self)')
    expect(await apiRedirects()).toHaveLength(2)
  })

  it('says a loop beside the To path field and a taken path beside the From path field, as well as above the form', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/here', toPath: '/there' })
    const loop = await create({ fromPath: '/there', toPath: '/here' })
    expect(loop.statusCode).toBe(422)
    const beside = (res: typeof loop, name: string) =>
      new RegExp(`<p class="field-problem" id="field-${name}-problem">([^<]*)</p>`).exec(res.body)?.[1]
    expect(beside(loop, 'toPath')).toContain('This would make a redirect loop (/there → /here → /there)')
    expect(loop.body).toMatch(/<input[^>]*id="field-toPath"[^>]*aria-invalid="true"/)
    expect(beside(loop, 'fromPath')).toBeUndefined()
    expect(loop.body).toMatch(/<div class="alert error"[\s\S]*This would make a redirect loop/)
    const taken = await create({ fromPath: '/here', toPath: '/elsewhere' })
    expect(beside(taken, 'fromPath')).toContain('A redirect from /here already exists')
    expect(beside(taken, 'toPath')).toBeUndefined()
  })

  it('refuses a second redirect from the same path', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/taken', toPath: '/x' })
    const res = await create({ fromPath: '/taken', toPath: '/y' })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain('A redirect from /taken already exists')
  })

  it('edits a redirect, under the same rules', async () => {
    const redirect = await buildRedirect(ctx.database.db, { fromPath: '/from', toPath: '/to' })
    await buildRedirect(ctx.database.db, { fromPath: '/to', toPath: '/end' })
    const form = await editor.get(`/admin/redirects/${redirect.id}/edit`)
    expect(form.body).toContain('value="/from"')
    const loop = await editor.post(`/admin/redirects/${redirect.id}`, {
      fromPath: '/end',
      toPath: '/to',
      type: 'permanent',
      isActive: 'true',
    })
    expect(loop.statusCode).toBe(422)
    expect(textOf(loop)).toContain('This would make a redirect loop (/end → /to → /end)')
    const saved = await editor.post(`/admin/redirects/${redirect.id}`, {
      fromPath: '/from',
      toPath: '/elsewhere',
      type: 'temporary',
    })
    expect(saved.statusCode).toBe(303)
    expect((await apiRedirects()).find((r) => r.id === redirect.id)).toMatchObject({
      fromPath: '/from',
      toPath: '/elsewhere',
      type: 'temporary',
      // The checkbox was left unticked.
      isActive: false,
    })
  })

  it('switches a redirect off and on, and the API filter follows', async () => {
    const redirect = await buildRedirect(ctx.database.db, { fromPath: '/toggle', toPath: '/x' })
    await editor.get('/admin/redirects')
    await editor.post(`/admin/redirects/${redirect.id}/active`, { active: 'false' })
    expect(rowText(await editor.get('/admin/redirects'), `redirect-${redirect.id}`)).toContain('Inactive')
    expect(await apiRedirects('&active=true')).toEqual([])
    await editor.post(`/admin/redirects/${redirect.id}/active`, { active: 'true' })
    expect(await apiRedirects('&active=true')).toHaveLength(1)
  })

  it('asks before deleting a redirect, then deletes it', async () => {
    const redirect = await buildRedirect(ctx.database.db, { fromPath: '/bye', toPath: '/x' })
    const confirm = await editor.get(`/admin/redirects/${redirect.id}/delete`)
    expect(textOf(confirm)).toContain('Delete the redirect from /bye?')
    expect(await apiRedirects()).toHaveLength(1)
    const res = await editor.post(`/admin/redirects/${redirect.id}/delete`)
    expect(res.statusCode).toBe(303)
    expect(textOf(await editor.get('/admin/redirects'))).toContain('Redirect from /bye deleted.')
    expect(await apiRedirects()).toEqual([])
  })

  it('warns about a chain when it is made, and flattens every chain in one click', async () => {
    await create({ fromPath: '/a', toPath: '/b' })
    const res = await create({ fromPath: '/b', toPath: '/c' })
    expect(res.statusCode).toBe(303)
    await create({ fromPath: '/c', toPath: '/d' })
    const list = await editor.get('/admin/redirects')
    const text = textOf(list)
    // Made within one second, the chains may be listed in either order.
    expect(text).toMatch(
      /it is part of a chain \((\/a → \/b → \/c → \/d; \/b → \/c → \/d|\/b → \/c → \/d; \/a → \/b → \/c → \/d)\)/,
    )
    expect(text).toContain('2 redirects form chains')
    expect(text).toContain('/a → /b → /c → /d')
    expect(list.body).toContain('action="/admin/redirects/flatten"')

    const flattened = await editor.post('/admin/redirects/flatten')
    expect(flattened.statusCode).toBe(303)
    const after = await editor.get('/admin/redirects')
    expect(textOf(after)).toContain('Flattened: 2 redirects now point straight at the end of its chain.')
    expect(textOf(after)).not.toContain('form chains')
    const paths = Object.fromEntries((await apiRedirects()).map((r) => [r.fromPath, r.toPath]))
    expect(paths).toEqual({ '/a': '/d', '/b': '/d', '/c': '/d' })
  })

  it('flattens chains that end in different places, each to its own end', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/x', toPath: '/y' })
    await buildRedirect(ctx.database.db, { fromPath: '/y', toPath: '/z' })
    await buildRedirect(ctx.database.db, { fromPath: '/p', toPath: '/q' })
    await buildRedirect(ctx.database.db, { fromPath: '/q', toPath: '/r', type: 'temporary' })
    await editor.get('/admin/redirects')
    expect((await editor.post('/admin/redirects/flatten')).statusCode).toBe(303)
    const paths = Object.fromEntries((await apiRedirects()).map((r) => [r.fromPath, [r.toPath, r.type]]))
    expect(paths).toEqual({
      '/x': ['/z', 'permanent'],
      '/y': ['/z', 'permanent'],
      // `/p` led through a temporary link: it answered 302, and still does.
      '/p': ['/r', 'temporary'],
      '/q': ['/r', 'temporary'],
    })
  })

  it('does not call a redirect through an inactive one a chain, and does not flatten it', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/a', toPath: '/b' })
    await buildRedirect(ctx.database.db, { fromPath: '/b', toPath: '/c', active: false })
    expect(textOf(await editor.get('/admin/redirects'))).not.toContain('chain')
    await editor.post('/admin/redirects/flatten')
    expect((await apiRedirects()).find((r) => r.fromPath === '/a')?.toPath).toBe('/b')
  })

  it('exports every redirect as CSV', async () => {
    await buildRedirect(ctx.database.db, {
      fromPath: '/one',
      toPath: '/1',
      createdAt: '2024-01-01T00:00:00Z',
    })
    await buildRedirect(ctx.database.db, {
      fromPath: '/two, "quoted"',
      toPath: '/2',
      type: 'temporary',
      active: false,
      createdAt: '2024-01-02T00:00:00Z',
    })
    const res = await editor.get('/admin/redirects/export.csv')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.headers['content-disposition']).toBe('attachment; filename="redirects.csv"')
    expect(res.body).toBe(
      'fromPath,toPath,type,isActive\n/one,/1,permanent,true\n"/two, ""quoted""",/2,temporary,false\n',
    )
  })

  it('imports its own export unchanged, and into a site without redirects recreates every redirect', async () => {
    await create({ fromPath: '/x', toPath: '/y' })
    await create({ fromPath: '/y', toPath: '/z', type: 'temporary', isActive: '' })
    await create({ fromPath: '/p', toPath: '/q' })
    const exported = (await editor.get('/admin/redirects/export.csv')).body

    await editor.get('/admin/redirects/import')
    const same = await editor.postMultipart(
      '/admin/redirects/import',
      {},
      { file: { name: 'redirects.csv', content: exported } },
    )
    expect(same.statusCode).toBe(303)
    expect(textOf(await editor.get('/admin/redirects'))).toContain(
      'Imported: 0 created, 0 updated, 3 unchanged.',
    )

    // Emptied of redirects, the site gets every one back from the file.
    await ctx.database.db.deleteFrom('redirects').execute()
    await editor.get('/admin/redirects/import')
    const res = await editor.postMultipart(
      '/admin/redirects/import',
      {},
      { file: { name: 'r.csv', content: exported } },
    )
    expect(res.statusCode).toBe(303)
    expect(textOf(await editor.get('/admin/redirects'))).toContain(
      'Imported: 3 created, 0 updated, 0 unchanged.',
    )
    // Rows made in the same second may come back in another order.
    const lines = (csv: string) => csv.trim().split('\n').sort()
    expect(lines((await editor.get('/admin/redirects/export.csv')).body)).toEqual(lines(exported))
  })

  it('imports pasted CSV: updates by from path, adds new rows, leaves the rest alone', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/keep', toPath: '/k' })
    await buildRedirect(ctx.database.db, { fromPath: '/change', toPath: '/old' })
    await editor.get('/admin/redirects/import')
    const res = await editor.post('/admin/redirects/import', {
      csv: 'fromPath,toPath,type,isActive\n/change,/new,temporary,true\n/added,/a,,\n',
    })
    expect(res.statusCode).toBe(303)
    expect(textOf(await editor.get('/admin/redirects'))).toContain(
      'Imported: 1 created, 1 updated, 0 unchanged.',
    )
    const paths = Object.fromEntries(
      (await apiRedirects()).map((r) => [r.fromPath, [r.toPath, r.type, r.isActive]]),
    )
    expect(paths).toEqual({
      '/keep': ['/k', 'permanent', true],
      '/change': ['/new', 'temporary', true],
      '/added': ['/a', 'permanent', true],
    })
  })

  it('refuses a CSV with problems, lists each with its line, and imports nothing', async () => {
    await buildRedirect(ctx.database.db, { fromPath: '/existing', toPath: '/loop-start' })
    const csv = [
      'fromPath,toPath,type,isActive',
      '/fine,/ok,permanent,true',
      '//evil,/x,permanent,true',
      '/bad-type,/x,forever,true',
      '/bad-flag,/x,permanent,maybe',
      '/fine,/again,,',
      '/loop-start,/existing,,',
    ].join('\n')
    await editor.get('/admin/redirects/import')
    const res = await editor.postMultipart(
      '/admin/redirects/import',
      {},
      { file: { name: 'r.csv', content: csv } },
    )
    expect(res.statusCode).toBe(422)
    const text = textOf(res)
    expect(text).toContain("line 3: From path must not start with '//'")
    expect(text).toContain("line 4: Type must be 'permanent' or 'temporary', not 'forever'")
    expect(text).toContain("line 5: isActive must be 'true' or 'false', not 'maybe'")
    expect(text).toContain('line 6: /fine appears again (first on line 2)')
    // The loop is found although other rows are bad, and listed in line order with them.
    const fileLoop = 'line 7: this would make a redirect loop (/loop-start → /existing → /loop-start)'
    expect(text.indexOf(fileLoop)).toBeGreaterThan(text.indexOf('line 6: /fine appears again'))
    expect(await apiRedirects()).toHaveLength(1)

    const loop = await editor.post('/admin/redirects/import', {
      csv: 'fromPath,toPath\n/loop-start,/existing\n',
    })
    expect(loop.statusCode).toBe(422)
    expect(textOf(loop)).toContain(
      'line 2: this would make a redirect loop (/loop-start → /existing → /loop-start)',
    )
    expect(await apiRedirects()).toHaveLength(1)
  })

  it('imports rows that leave out the optional columns at the end', async () => {
    await editor.get('/admin/redirects/import')
    const res = await editor.post('/admin/redirects/import', {
      csv: 'fromPath,toPath,type,isActive\n/short,/s\n/typed,/t,temporary\n',
    })
    expect(res.statusCode).toBe(303)
    const paths = Object.fromEntries(
      (await apiRedirects()).map((r) => [r.fromPath, [r.toPath, r.type, r.isActive]]),
    )
    expect(paths).toEqual({ '/short': ['/s', 'permanent', true], '/typed': ['/t', 'temporary', true] })
  })

  it('refuses a row without both paths, or with more values than columns', async () => {
    await editor.get('/admin/redirects/import')
    const res = await editor.post('/admin/redirects/import', {
      csv: 'fromPath,toPath,type,isActive\n/only-from\n/a,/b,permanent,true,extra\n',
    })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain('line 2: expected 2 to 4 values, found 1')
    expect(textOf(res)).toContain('line 3: expected 2 to 4 values, found 5')
    expect(await apiRedirects()).toEqual([])
  })

  it('lists only the first loops of a file with many, and counts the rest', async () => {
    const rows = Array.from({ length: 60 }, (_, i) => `/loop${i},/loop${i}`)
    await editor.get('/admin/redirects/import')
    const res = await editor.post('/admin/redirects/import', { csv: `fromPath,toPath\n${rows.join('\n')}\n` })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain('line 2: this would make a redirect loop (/loop0 → /loop0)')
    expect(textOf(res)).toContain('…and 10 more problems')
  })

  it.each([
    ['', 'the file is empty'],
    ['from,to\n/a,/b\n', "line 1: unknown column 'from'"],
    ['fromPath,toPath\n', 'the file has a header but no redirects'],
    ['fromPath,toPath\n"/a,/b\n', 'the file is not valid CSV'],
  ])('explains why a CSV cannot be read (%j)', async (csv, message) => {
    await editor.get('/admin/redirects/import')
    const res = await editor.post('/admin/redirects/import', { csv })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain(message)
  })
})
