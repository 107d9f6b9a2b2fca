import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ImportError } from '../../src/services/import/index.js'
import { type DashboardClient, signedInClient, textOf } from '../admin/support.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'

/** Paths that reach another host, or hide a separator, once a browser or proxy has read them. */
const REFUSED: [path: string, reason: string][] = [
  ['/..//evil.com', "must not contain a dot segment ('/./' or '/../', or end in '/.' or '/..')"],
  ['/.//evil.com', "must not contain a dot segment ('/./' or '/../', or end in '/.' or '/..')"],
  ['/a/..', "must not contain a dot segment ('/./' or '/../', or end in '/.' or '/..')"],
  ['/%2F%2Fevil.com', "must not contain an encoded slash (found '%2F')"],
  ['/%2f%2fevil.com', "must not contain an encoded slash (found '%2f')"],
  ['/%5Cevil.com', "must not contain an encoded backslash (found '%5C')"],
  ['/%09/evil.com', "must not contain an encoded control character (found '%09')"],
  ['/a%7f', "must not contain an encoded control character (found '%7f')"],
  ['/%2e%2e/%2e%2e/etc', "decodes to '/../../etc', which must not contain a dot segment"],
  ['/%252F%252Fevil.com', "decodes to '/%2F%2Fevil.com', which must not contain an encoded slash"],
  ['/a%3Fx=1', "decodes to '/a?x=1', which must not contain a query string ('?')"],
  ['/%C3%28', 'has an invalid percent-encoding'],
  ['/50%-off', 'has an invalid percent-encoding'],
]

/** Given as typed, stored percent-decoded (the redirect algorithm's first rule). */
const DECODED: [given: string, stored: string][] = [
  ['/%C3%BCber', '/über'],
  ['/caf%C3%A9/men%c3%bc', '/café/menü'],
  ['/100%25-pure', '/100%-pure'],
  ['/a%20b', '/a b'],
]

describe('redirect paths at every way in', () => {
  let ctx: TestContext
  let editor: DashboardClient

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    editor = (await signedInClient(ctx.app, ctx.database.db, 'editor')).client
  })
  afterAll(() => ctx.close())
  beforeEach(async () => {
    await ctx.database.db.deleteFrom('redirects').execute()
  })

  const stored = async () =>
    (
      await ctx.database.db
        .selectFrom('redirects')
        .select(['from_path', 'to_path'])
        .orderBy('from_path')
        .execute()
    ).map((row) => [row.from_path, row.to_path])

  const viaForm = async (fromPath: string, toPath: string) => {
    await editor.get('/admin/redirects/new')
    return editor.post('/admin/redirects', { fromPath, toPath, type: 'permanent', isActive: 'true' })
  }
  const viaCsv = async (csv: string) => {
    await editor.get('/admin/redirects/import')
    return editor.postMultipart('/admin/redirects/import', {}, { file: { name: 'r.csv', content: csv } })
  }
  const importError = async (work: Promise<unknown>): Promise<string[]> => {
    const error = await work.then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(ImportError)
    return (error as ImportError).problems
  }

  it.each(REFUSED)('refuses %j in the dashboard form, naming the field', async (path, reason) => {
    const from = await viaForm(path, '/fine')
    expect(from.statusCode).toBe(422)
    expect(textOf(from)).toContain(`From path ${reason}`)
    const to = await viaForm('/fine', path)
    expect(to.statusCode).toBe(422)
    expect(textOf(to)).toContain(`To path ${reason}`)
    expect(await stored()).toEqual([])
  })

  it.each(REFUSED)('refuses %j in a CSV import, with its line and field', async (path, reason) => {
    const res = await viaCsv(`fromPath,toPath\n"${path}",/fine\n/fine-too,"${path}"\n`)
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain(`line 2: From path ${reason}`)
    expect(textOf(res)).toContain(`line 3: To path ${reason}`)
    expect(await stored()).toEqual([])
  })

  it.each(REFUSED)('refuses %j in an NDJSON import, as `lectern import` reads it', async (path, reason) => {
    const file = join(ctx.dir, 'paths.ndjson')
    writeFileSync(
      file,
      [
        { kind: 'redirect', fromPath: path, toPath: '/fine' },
        { kind: 'redirect', fromPath: '/fine-too', toPath: path },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    )
    expect(await importError(ctx.services.importer.importFile(file))).toEqual([
      expect.stringContaining(`line 1 (redirect): fromPath ${reason}`),
      expect.stringContaining(`line 2 (redirect): toPath ${reason}`),
    ])
    expect(await stored()).toEqual([])
  })

  it.each(REFUSED)('refuses %j in a JSON import', async (path, reason) => {
    const problems = await importError(
      ctx.services.importer.importRecords({
        redirects: [
          { fromPath: path, toPath: '/fine' },
          { fromPath: '/fine-too', toPath: path },
        ],
      }),
    )
    expect(problems).toEqual([
      expect.stringContaining(`redirects[0].fromPath: ${reason}`),
      expect.stringContaining(`redirects[1].toPath: ${reason}`),
    ])
    expect(await stored()).toEqual([])
  })

  it('stores paths typed in the dashboard form percent-decoded, and shows them for editing as they are typed', async () => {
    for (const [given] of DECODED) expect((await viaForm(given, `${given}-new`)).statusCode).toBe(303)
    expect(await stored()).toEqual(
      DECODED.map(([, decoded]) => [decoded, `${decoded}-new`]).sort(([a], [b]) => (a < b ? -1 : 1)),
    )
    const row = await ctx.database.db
      .selectFrom('redirects')
      .select('id')
      .where('from_path', '=', '/100%-pure')
      .executeTakeFirstOrThrow()
    const form = await editor.get(`/admin/redirects/${row.id}/edit`)
    expect(form.body).toContain('value="/100%25-pure"')
    // Saved again unchanged, the path stays what it was.
    const saved = await editor.post(`/admin/redirects/${row.id}`, {
      fromPath: '/100%25-pure',
      toPath: '/100%25-pure-new',
      type: 'permanent',
      isActive: 'true',
    })
    expect(saved.statusCode).toBe(303)
    expect(await stored()).toContainEqual(['/100%-pure', '/100%-pure-new'])
  })

  it('stores CSV paths percent-decoded, and its export reads back to the same paths', async () => {
    const csv = `fromPath,toPath\n${DECODED.map(([given]) => `${given},${given}-new`).join('\n')}\n`
    expect((await viaCsv(csv)).statusCode).toBe(303)
    const expected = DECODED.map(([, decoded]) => [decoded, `${decoded}-new`]).sort(([a], [b]) =>
      a < b ? -1 : 1,
    )
    expect(await stored()).toEqual(expected)
    const exported = (await editor.get('/admin/redirects/export.csv')).body
    expect(exported).toContain('/100%25-pure,/100%25-pure-new,permanent,true')
    const again = await viaCsv(exported)
    expect(again.statusCode).toBe(303)
    expect(textOf(await editor.get('/admin/redirects'))).toContain(
      'Imported: 0 created, 0 updated, 4 unchanged.',
    )
  })

  it('stores imported paths percent-decoded, and one path given two ways is one path', async () => {
    await ctx.services.importer.importRecords({
      redirects: DECODED.map(([given]) => ({ fromPath: given, toPath: `${given}-new` })),
    })
    expect(await stored()).toEqual(
      DECODED.map(([, decoded]) => [decoded, `${decoded}-new`]).sort(([a], [b]) => (a < b ? -1 : 1)),
    )
    const problems = await importError(
      ctx.services.importer.importRecords({
        redirects: [
          { fromPath: '/straße', toPath: '/a' },
          { fromPath: '/stra%C3%9Fe', toPath: '/b' },
        ],
      }),
    )
    expect(problems).toEqual([
      "redirects[1].fromPath: '/straße' is already redirected by the redirect at redirects[0]",
    ])
  })
})
