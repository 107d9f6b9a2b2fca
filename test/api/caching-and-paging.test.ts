import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ImportError } from '../../src/services/import/index.js'
import { runCli } from '../cli/run-cli.js'
import { buildApiKey, buildForm, buildRedirect, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

const GENEROUS = { perHour: 1_000_000, perSecond: 1_000_000 }

describe('cached responses and entity tags', () => {
  let ctx: TestContext
  let authorization: string
  const get = (url: string, headers: Record<string, string> = {}) =>
    ctx.app.inject({ url, headers: { authorization, ...headers } })

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS)
    authorization = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  it('answers If-None-Match with 304, no body and the rate-limit headers while nothing changed', async () => {
    await buildForm(ctx.database.db, { title: 'Tagged' })
    const first = await get('/api/v1/forms')
    const tag = first.headers.etag as string
    expect(tag).toMatch(/^"\d+-[\w-]+"$/)
    expect(first.headers['cache-control']).toBe('private, no-cache')
    const again = await get('/api/v1/forms', { 'if-none-match': tag })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    expect(again.headers.etag).toBe(tag)
    expect(again.headers['x-ratelimit-remaining']).toBeDefined()
    expect((await get('/api/v1/forms', { 'if-none-match': `W/${tag}, "other"` })).statusCode).toBe(304)
    expect((await get('/api/v1/forms?pageSize=5', { 'if-none-match': tag })).statusCode).toBe(200)
  })

  it('answers a page kept in the cache with the same tag and body it was built with', async () => {
    await buildForm(ctx.database.db, { title: 'Kept' })
    const built = await get('/api/v1/forms?pageSize=7')
    // The second request keeps the page; the third is answered from the cache.
    for (const answer of [await get('/api/v1/forms?pageSize=7'), await get('/api/v1/forms?pageSize=7')]) {
      expect(answer.statusCode).toBe(200)
      expect(answer.headers.etag).toBe(built.headers.etag)
      expect(answer.body).toBe(built.body)
    }
  })

  it('serves a change on the very next request, with a new tag, however the change was made', async () => {
    const before = await get('/api/v1/page-builder/redirects')
    await buildRedirect(ctx.database.db, { fromPath: '/cached-old', toPath: '/cached-new' })
    const afterInsert = await get('/api/v1/page-builder/redirects', {
      'if-none-match': before.headers.etag as string,
    })
    expect(afterInsert.statusCode).toBe(200)
    expect(afterInsert.json().data.map((r: { fromPath: string }) => r.fromPath)).toContain('/cached-old')

    // An operator's own SQL moves the version too: the triggers, not the code paths, keep it.
    await sql`update redirects set to_path = ${'/by-hand'} where from_path = ${'/cached-old'}`.execute(
      ctx.database.db,
    )
    const afterUpdate = await get('/api/v1/page-builder/redirects')
    expect(afterUpdate.headers.etag).not.toBe(afterInsert.headers.etag)
    expect(
      afterUpdate.json().data.find((r: { fromPath: string }) => r.fromPath === '/cached-old').toPath,
    ).toBe('/by-hand')

    await sql`delete from redirects where from_path = ${'/cached-old'}`.execute(ctx.database.db)
    expect(
      (await get('/api/v1/page-builder/redirects')).json().data.map((r: { fromPath: string }) => r.fromPath),
    ).not.toContain('/cached-old')
  })

  it('serves content imported by the CLI in another process on the very next request', async () => {
    const form = await buildForm(ctx.database.db, { id: 'form_cli_import' })
    const url = `/api/v1/forms/${form.id}/submissions`
    expect((await get(url)).json().meta.total).toBe(0)
    const file = join(ctx.dir, 'more.json')
    writeFileSync(file, JSON.stringify({ submissions: [{ formId: form.id, data: { via: 'cli' } }] }))
    const imported = await runCli(['import', file], { databaseUrl: ctx.databaseUrl })
    expect(imported.stderr).toBe('')
    expect(imported.code).toBe(0)
    const after = await get(url)
    expect(after.json().meta.total).toBe(1)
    expect(after.json().data[0].data).toEqual({ via: 'cli' })
  })

  it('keeps every later write visible after an import, and after an import that was refused', async () => {
    const redirectPaths = async () =>
      (await get('/api/v1/page-builder/redirects?pageSize=100'))
        .json()
        .data.map((r: { fromPath: string }) => r.fromPath)
    const good = join(ctx.dir, 'good.json')
    writeFileSync(good, JSON.stringify({ redirects: [{ fromPath: '/imported', toPath: '/x' }] }))
    await ctx.services.importer.importFile(good)
    expect(await redirectPaths()).toContain('/imported')
    await buildRedirect(ctx.database.db, { fromPath: '/after-import' })
    expect(await redirectPaths()).toContain('/after-import')

    const bad = join(ctx.dir, 'bad.json')
    writeFileSync(
      bad,
      JSON.stringify({
        redirects: [
          { fromPath: '/ok', toPath: '/y' },
          { fromPath: '//evil', toPath: '/z' },
        ],
      }),
    )
    await expect(ctx.services.importer.importFile(bad)).rejects.toBeInstanceOf(ImportError)
    expect(await redirectPaths()).not.toContain('/ok')
    await buildRedirect(ctx.database.db, { fromPath: '/after-refusal' })
    expect(await redirectPaths()).toContain('/after-refusal')
  })

  /**
   * Renames a form and then puts the forms' version back where it was: a response built before
   * still carries the old title, so whichever title a list shows tells a cached body from a fresh one.
   */
  async function renameBehindTheCache(id: string, title: string): Promise<void> {
    const { version } = await ctx.database.db
      .selectFrom('content_versions')
      .select('version')
      .where('kind', '=', 'forms')
      .executeTakeFirstOrThrow()
    await ctx.database.db.updateTable('forms').set({ title }).where('id', '=', id).execute()
    await ctx.database.db
      .updateTable('content_versions')
      .set({ version })
      .where('kind', '=', 'forms')
      .execute()
  }
  const titleOf = async (url: string, id: string) =>
    (await get(url)).json().data.find((form: { id: string }) => form.id === id)?.title

  it('serves a page asked for a second time from the cache from then on', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Asked twice' })
    const url = '/api/v1/forms?pageSize=97'
    expect(await titleOf(url, form.id)).toBe('Asked twice')
    expect(await titleOf(url, form.id)).toBe('Asked twice')
    await renameBehindTheCache(form.id, 'Renamed')
    expect(await titleOf(url, form.id)).toBe('Asked twice')
  })

  it('keeps a kept page again from its first request after a change', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Kept' })
    const url = '/api/v1/forms?pageSize=96'
    await get(url)
    await get(url)
    await ctx.database.db.updateTable('forms').set({ title: 'Changed' }).where('id', '=', form.id).execute()
    expect(await titleOf(url, form.id)).toBe('Changed')
    await renameBehindTheCache(form.id, 'Renamed')
    expect(await titleOf(url, form.id)).toBe('Changed')
  })

  it('does not keep a page asked for only once', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Asked once' })
    const url = '/api/v1/forms?pageSize=98'
    expect(await titleOf(url, form.id)).toBe('Asked once')
    await renameBehindTheCache(form.id, 'Renamed')
    expect(await titleOf(url, form.id)).toBe('Renamed')
  })

  it('keeps a list of submissions asked for twice, byte for byte what it sent first', async () => {
    const form = await buildForm(ctx.database.db, { title: 'With submissions' })
    await buildSubmission(ctx.database.db, { formId: form.id, data: { name: 'Ada', note: 'ü ✓' } })
    const url = `/api/v1/forms/${form.id}/submissions?pageSize=99`
    const first = await get(url)
    const second = await get(url)
    const third = await get(url)
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true)
    expect(third.rawPayload.equals(first.rawPayload)).toBe(true)
    expect(third.headers['content-length']).toBe(String(first.rawPayload.length))
    expect(third.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(third.json().data[0].data).toEqual({ name: 'Ada', note: 'ü ✓' })
  })

  it('still answers 404 for an unknown form whatever If-None-Match says', async () => {
    const res = await get('/api/v1/forms/form_nowhere/submissions', { 'if-none-match': '*' })
    expect(res.statusCode).toBe(404)
  })

  it('finds a form created since it was asked for, and loses one deleted, on the very next request', async () => {
    const url = '/api/v1/forms/form_comes_and_goes/submissions?pageSize=3'
    expect((await get(url)).statusCode).toBe(404)
    expect((await get(url)).statusCode).toBe(404)
    await buildForm(ctx.database.db, { id: 'form_comes_and_goes', title: 'Here now' })
    expect((await get(url)).statusCode).toBe(200)
    expect((await get(url)).statusCode).toBe(200)
    await ctx.database.db.deleteFrom('forms').where('id', '=', 'form_comes_and_goes').execute()
    expect((await get(url)).statusCode).toBe(404)
  })
})

describe('deep pages', () => {
  let ctx: TestContext
  let authorization: string
  const FORM = 'form_deep'
  const COUNT = 1500
  let expected: string[]

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS)
    authorization = (await buildApiKey(ctx.database.db)).authorization
    await buildForm(ctx.database.db, { id: FORM })
    await buildForm(ctx.database.db, { id: 'form_other' })
    // Many ties on createdAt (three rows per second), so the id tie-break decides the order across
    // the remembered page boundaries; ids are random so their order differs from insertion order.
    const rows = Array.from({ length: COUNT }, (_, i) => ({
      id: `submission_${(i * 7919) % COUNT}x${i}`,
      form_id: i % 10 === 0 ? 'form_other' : FORM,
      data: JSON.stringify({ i }),
      ip_address: null,
      user_agent: null,
      referrer: null,
      submitted_by: null,
      is_read: 0 as const,
      is_starred: 0 as const,
      notes: null,
      created_at: new Date(Date.UTC(2024, 0, 1) + Math.floor(i / 3) * 1000).toISOString().replace('.000', ''),
      updated_at: '2024-01-01T00:00:00Z',
    }))
    for (let i = 0; i < rows.length; i += 200) {
      await ctx.database.db
        .insertInto('submissions')
        .values(rows.slice(i, i + 200))
        .execute()
    }
    // The order the SPEC asks for, computed independently of the database: newest first, ties by id.
    expected = rows
      .filter((r) => r.form_id === FORM)
      .sort((a, b) =>
        a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1,
      )
      .map((r) => r.id)
  })
  afterAll(() => ctx.close())

  const pageIds = async (page: number, pageSize: number) => {
    const res = await ctx.app.inject({
      url: `/api/v1/forms/${FORM}/submissions?page=${page}&pageSize=${pageSize}`,
      headers: { authorization },
    })
    expect(res.statusCode).toBe(200)
    const body = res.json() as { data: { id: string }[]; meta: { total: number; totalPages: number } }
    expect(body.meta.total).toBe(expected.length)
    return body
  }

  it('returns exactly the rows OFFSET would, at every depth and page size', async () => {
    for (const pageSize of [100, 37, 1]) {
      const totalPages = Math.ceil(expected.length / pageSize)
      const pages =
        pageSize === 1
          ? [1, 19, 20, 21, 40, 41, 255, 256, 257, expected.length, expected.length + 1]
          : undefined
      for (const page of pages ?? Array.from({ length: totalPages + 1 }, (_, i) => i + 1)) {
        const body = await pageIds(page, pageSize)
        expect(body.data.map((s) => s.id)).toEqual(expected.slice((page - 1) * pageSize, page * pageSize))
      }
    }
  })

  it('reads the new order on the next request after a row is added in the middle', async () => {
    expect((await pageIds(10, 100)).data.map((s) => s.id)).toEqual(expected.slice(900, 1000))
    const inserted = { id: 'submission_inserted', created_at: '2024-01-01T00:05:00Z' }
    await ctx.database.db
      .insertInto('submissions')
      .values({
        ...inserted,
        form_id: FORM,
        data: '{}',
        is_read: 0,
        is_starred: 0,
        updated_at: inserted.created_at,
      })
      .execute()
    // Rows newer than the inserted one keep their places; it takes the next (its id sorts after every
    // tie's id, so it comes first among rows of its second); the rest move down one.
    const createdAtOf = (id: string) =>
      new Date(Date.UTC(2024, 0, 1) + Math.floor(Number(id.split('x')[1]) / 3) * 1000)
        .toISOString()
        .replace('.000', '')
    const newer = expected.filter((id) => createdAtOf(id) > inserted.created_at).length
    const shifted = [...expected.slice(0, newer), inserted.id, ...expected.slice(newer)]
    expected = shifted
    for (const page of [1, 3, 10, 14]) {
      expect((await pageIds(page, 100)).data.map((s) => s.id)).toEqual(
        shifted.slice((page - 1) * 100, page * 100),
      )
    }
  })
})
