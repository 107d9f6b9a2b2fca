import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Form, Page } from '../../src/schemas.js'
import { buildApiKey, buildForm, buildPage, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectList, GENEROUS_LIMITS, request, TIMESTAMP } from '../security-suite.js'
import { type DashboardClient, rowText, signedInClient, textOf } from './support.js'

/** The markup of the editor field whose control has id `field-<name>`: its label, hint, problem and control. */
function fieldMarkup(res: LightMyRequestResponse, name: string): string {
  const control = res.body.indexOf(`id="field-${name}"`)
  if (control === -1) throw new Error(`no field ${name}`)
  const start = res.body.lastIndexOf('<div class="field">', control)
  return res.body.slice(start, res.body.indexOf('</div>', control))
}

/** Asserts that the field `name` says `message` beside itself, tied to its control, and in the summary above. */
function expectProblemBeside(res: LightMyRequestResponse, name: string, message: string): void {
  expect(res.statusCode).toBe(422)
  const markup = fieldMarkup(res, name)
  expect(textOf({ body: markup })).toContain(message)
  expect(markup).toMatch(new RegExp(`id="field-${name}-problem"`))
  expect(markup).toMatch(new RegExp(`aria-describedby="[^"]*field-${name}-problem[^"]*"`))
  expect(markup).toContain('aria-invalid="true"')
  const summary = /<div class="alert error" role="alert"[\s\S]*?<\/div>/.exec(res.body)?.[0] ?? ''
  expect(textOf({ body: summary })).toContain(message)
}

describe('authoring forms and pages in the dashboard', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let editor: DashboardClient
  let editorEmail: string
  let viewer: DashboardClient
  let apiKey: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    const signed = await signedInClient(app, ctx.database.db, 'editor')
    editor = signed.client
    editorEmail = signed.user.email
    viewer = (await signedInClient(app, ctx.database.db, 'viewer')).client
    apiKey = (await buildApiKey(ctx.database.db, { role: 'editor' })).authorization
  })
  afterAll(() => ctx.close())

  const db = () => ctx.database.db
  const apiForms = async (query = '') =>
    expectList<Form>(await request(app, `/api/v1/forms?pageSize=100${query}`, apiKey)).data
  const apiPages = async (query = '') =>
    expectList<Page>(await request(app, `/api/v1/page-builder?pageSize=100${query}`, apiKey)).data
  /** Every audit entry about forms and pages, oldest first. */
  const contentAudit = async () =>
    (await ctx.services.audit.recent(10_000)).filter((entry) => /^(form|page)\./.test(entry.action)).reverse()
  const auditOf = async (action: string, target: string) =>
    (await contentAudit()).filter((entry) => entry.action === action && entry.target === target)
  const countRows = async (table: 'forms' | 'pages' | 'submissions') =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  const createForm = async (fields: Record<string, string>) => {
    await editor.get('/admin/forms/new')
    return editor.post('/admin/forms', fields)
  }
  const createPage = async (fields: Record<string, string>) => {
    await editor.get('/admin/pages/new')
    return editor.post('/admin/pages', { slug: '', pageType: '', ...fields })
  }
  /** The id a successful create sent the browser to, read from the `#form-…`/`#page-…` fragment. */
  const createdId = (res: LightMyRequestResponse) => {
    expect(res.statusCode).toBe(303)
    const id = /#(?:form|page)-(.+)$/.exec(String(res.headers.location))?.[1]
    if (!id) throw new Error(`no id in ${res.headers.location}`)
    return id
  }

  describe('forms', () => {
    it('creates a form that the API lists at once, and sends the browser to it with a message', async () => {
      const list = await editor.get('/admin/forms')
      expect(list.body).toContain('href="/admin/forms/new"')
      expect(textOf(list)).toContain('New form')
      await apiForms()
      const res = await createForm({
        title: '  Newsletter  ',
        description: 'Sign up for news',
        isActive: 'true',
      })
      const id = createdId(res)
      expect(id).toMatch(/^form_[0-9A-Za-z]{20}$/)
      expect(res.headers.location).toBe(`/admin/forms?page=1#form-${id}`)
      const page = await editor.get('/admin/forms?page=1')
      expect(textOf(page)).toContain('Form “Newsletter” created.')
      expect(rowText(page, `form-${id}`)).toMatch(
        /Newsletter Sign up for news Active Edit Deactivate Delete…/,
      )
      expect(page.body).toContain(`href="/admin/forms/${id}/edit"`)
      expect(page.body).toContain(`href="/admin/forms/${id}/delete"`)
      // The response cache was warm before the change; the database's triggers moved its version.
      expect(await apiForms()).toContainEqual({ id, title: 'Newsletter', description: 'Sign up for news' })
      expect(await auditOf('form.created', id)).toEqual([
        expect.objectContaining({
          actor: editorEmail,
          detail: { title: 'Newsletter', description: 'Sign up for news', isActive: true },
        }),
      ])
    })

    it('sends a reloaded answer to the list, not into a second create (303, message shown once)', async () => {
      const before = await countRows('forms')
      const res = await createForm({ title: 'Reloaded form', isActive: 'true' })
      const location = String(res.headers.location)
      const first = await editor.get(location)
      const again = await editor.get(location)
      expect(textOf(first)).toContain('Form “Reloaded form” created.')
      expect(textOf(again)).not.toContain('Form “Reloaded form” created.')
      expect(await countRows('forms')).toBe(before + 1)
    })

    it('edits a form, and the API shows the change at once', async () => {
      const form = await buildForm(db(), { title: 'Old title', description: 'Old description' })
      expect(await apiForms()).toContainEqual({
        id: form.id,
        title: 'Old title',
        description: 'Old description',
      })
      const editorPage = await editor.get(`/admin/forms/${form.id}/edit`)
      expect(editorPage.statusCode).toBe(200)
      expect(editorPage.body).toContain('value="Old title"')
      expect(editorPage.body).toContain('>Old description</textarea>')
      expect(editorPage.body).toMatch(/id="field-isActive"[^>]* checked/)

      // The checkbox is left unticked and the description emptied.
      const res = await editor.post(`/admin/forms/${form.id}`, { title: 'New title', description: '  ' })
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toMatch(new RegExp(`^/admin/forms\\?page=\\d+#form-${form.id}$`))
      expect(textOf(await editor.get(String(res.headers.location)))).toContain('Form “New title” saved.')
      expect((await apiForms()).find((f) => f.id === form.id)).toEqual({
        id: form.id,
        title: 'New title',
        description: null,
      })
      expect((await apiForms('&active=false')).map((f) => f.id)).toContain(form.id)
      expect(await auditOf('form.updated', form.id)).toEqual([
        expect.objectContaining({
          actor: editorEmail,
          detail: {
            title: 'New title',
            description: null,
            isActive: false,
            previous: { title: 'Old title', description: 'Old description', isActive: true },
          },
        }),
      ])
    })

    it('writes and records nothing when a form is saved unchanged', async () => {
      const form = await buildForm(db(), { title: 'Steady', createdAt: '2024-01-05T10:00:00Z' })
      await editor.get(`/admin/forms/${form.id}/edit`)
      const res = await editor.post(`/admin/forms/${form.id}`, { title: 'Steady', isActive: 'true' })
      expect(res.statusCode).toBe(303)
      expect(textOf(await editor.get(String(res.headers.location)))).toContain('Nothing changed in “Steady”.')
      const row = await db()
        .selectFrom('forms')
        .selectAll()
        .where('id', '=', form.id)
        .executeTakeFirstOrThrow()
      expect(row.updated_at).toBe('2024-01-05T10:00:00Z')
      expect(await auditOf('form.updated', form.id)).toEqual([])
    })

    it('goes back to the list page that shows the form: the last one for a new form', async () => {
      for (let i = 0; i < 25; i++)
        await buildForm(db(), { title: `Filler ${i}`, createdAt: '2020-01-01T00:00:00Z' })
      const total = await countRows('forms')
      const res = await createForm({ title: 'At the end', isActive: 'true' })
      const id = createdId(res)
      const lastPage = Math.ceil((total + 1) / 20)
      expect(lastPage).toBeGreaterThan(1)
      expect(res.headers.location).toBe(`/admin/forms?page=${lastPage}#form-${id}`)
      expect(textOf(await editor.get(`/admin/forms?page=${lastPage}`))).toContain('At the end')
    })

    it.each([
      ['a blank title', { title: '' }, 'title', 'Title must not be empty'],
      ['a title of spaces', { title: '   ' }, 'title', 'Title must not be empty'],
      [
        'a title too long',
        { title: 'x'.repeat(201) },
        'title',
        'Title must be at most 200 characters (got 201)',
      ],
      [
        'a NUL byte in the title',
        { title: 'Con\u0000tact' },
        'title',
        'Title must not contain NUL (\\u0000) characters',
      ],
      [
        'a description too long',
        { title: 'Fine', description: 'd'.repeat(5001) },
        'description',
        'Description must be at most 5000 characters (got 5001)',
      ],
    ])(
      'refuses %s beside the field, keeps what was typed, and writes nothing',
      async (_label, fields, name, message) => {
        const [forms, audit] = [await countRows('forms'), (await contentAudit()).length]
        const typed: Record<string, string> = { description: 'Kept description', isActive: 'true', ...fields }
        const res = await createForm(typed)
        expectProblemBeside(res, name, message)
        // What was typed comes back, to be corrected rather than typed again.
        expect(res.body).toContain(`>${typed.description}</textarea>`)
        expect(res.body).toMatch(/id="field-isActive"[^>]* checked/)
        expect(await countRows('forms')).toBe(forms)
        expect((await contentAudit()).length).toBe(audit)
      },
    )

    it('refuses an edit with problems and leaves the form as it was', async () => {
      const form = await buildForm(db(), { title: 'Unspoilt' })
      await editor.get(`/admin/forms/${form.id}/edit`)
      const res = await editor.post(`/admin/forms/${form.id}`, { title: '', description: 'New words' })
      expectProblemBeside(res, 'title', 'Title must not be empty')
      expect(res.body).toContain(`action="/admin/forms/${form.id}"`)
      expect(res.body).toContain('>New words</textarea>')
      expect((await apiForms()).find((f) => f.id === form.id)).toMatchObject({
        title: 'Unspoilt',
        description: null,
      })
      expect(await auditOf('form.updated', form.id)).toEqual([])
    })

    it('asks before deleting a form, counting its submissions, then deletes both and the API forgets them', async () => {
      const form = await buildForm(db(), { title: 'Doomed form' })
      const other = await buildForm(db(), { title: 'Neighbour' })
      for (let i = 0; i < 3; i++) await buildSubmission(db(), { formId: form.id })
      await buildSubmission(db(), { formId: other.id })
      const adminKey = (await buildApiKey(db(), { role: 'global_admin' })).authorization
      expect(
        expectList(await request(app, `/api/v1/forms/${form.id}/submissions`, adminKey)).data,
      ).toHaveLength(3)
      expect((await apiForms()).map((f) => f.id)).toContain(form.id)

      const confirm = await editor.get(`/admin/forms/${form.id}/delete`)
      expect(confirm.statusCode).toBe(200)
      expect(textOf(confirm)).toContain('Delete the form “Doomed form”?')
      expect(textOf(confirm)).toContain('Its 3 submissions are deleted with it.')
      expect(textOf(confirm)).toContain('Delete form and 3 submissions')
      expect(confirm.body).toContain(`action="/admin/forms/${form.id}/delete"`)
      // Looking is not deleting.
      expect(await countRows('submissions')).toBeGreaterThanOrEqual(4)

      const res = await editor.post(`/admin/forms/${form.id}/delete`)
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe('/admin/forms')
      expect(textOf(await editor.get('/admin/forms'))).toContain(
        'Form “Doomed form” deleted, with its 3 submissions.',
      )
      expect((await apiForms()).map((f) => f.id)).not.toContain(form.id)
      expect((await request(app, `/api/v1/forms/${form.id}/submissions`, adminKey)).statusCode).toBe(404)
      const left = await db().selectFrom('submissions').select('form_id').execute()
      expect(left.filter((row) => row.form_id === form.id)).toEqual([])
      expect(left.filter((row) => row.form_id === other.id)).toHaveLength(1)
      expect(await auditOf('form.deleted', form.id)).toEqual([
        expect.objectContaining({
          actor: editorEmail,
          detail: { title: 'Doomed form', deletedSubmissions: 3 },
        }),
      ])
      // Deleting it again finds nothing.
      expect((await editor.post(`/admin/forms/${form.id}/delete`)).statusCode).toBe(404)
    })

    it('says a form without submissions has none before deleting it', async () => {
      const form = await buildForm(db(), { title: 'Empty form' })
      const confirm = await editor.get(`/admin/forms/${form.id}/delete`)
      expect(textOf(confirm)).toContain('It has no submissions.')
      await editor.post(`/admin/forms/${form.id}/delete`)
      expect(textOf(await editor.get('/admin/forms'))).toContain('Form “Empty form” deleted.')
    })
  })

  describe('pages', () => {
    it('creates a published page that the API serves at once, with publishedAt set', async () => {
      const list = await editor.get('/admin/pages')
      expect(list.body).toContain('href="/admin/pages/new"')
      await apiPages()
      const res = await createPage({
        title: 'About us',
        slug: 'about-us',
        path: ' /about-us ',
        pageType: '',
        isPublished: 'true',
      })
      const id = createdId(res)
      expect(id).toMatch(/^page_[0-9A-Za-z]{20}$/)
      const page = await editor.get(String(res.headers.location))
      expect(textOf(page)).toContain('Page “About us” created.')
      expect(rowText(page, `page-${id}`)).toMatch(
        /About us \/about-us page Published .* Edit Unpublish Delete…/,
      )
      const served = (await apiPages()).find((p) => p.id === id)
      expect(served).toMatchObject({
        title: 'About us',
        slug: 'about-us',
        path: '/about-us',
        pageType: 'page',
        isPublished: true,
        publishedAt: expect.stringMatching(TIMESTAMP),
      })
      expect(await auditOf('page.created', id)).toEqual([
        expect.objectContaining({
          actor: editorEmail,
          detail: {
            title: 'About us',
            slug: 'about-us',
            path: '/about-us',
            pageType: 'page',
            isPublished: true,
          },
        }),
      ])
    })

    it('creates a draft without publishedAt', async () => {
      const id = createdId(
        await createPage({ title: 'Draft', slug: 'draft', path: '/a-draft', pageType: 'landing' }),
      )
      expect((await apiPages()).find((p) => p.id === id)).toMatchObject({
        isPublished: false,
        publishedAt: null,
        pageType: 'landing',
      })
    })

    it('keeps publishedAt when a published page is saved again, clears it when unpublished, sets it anew when republished', async () => {
      const page = await buildPage(db(), {
        title: 'Long live',
        path: '/long-live',
        published: true,
        createdAt: '2023-05-01T08:00:00Z',
      })
      const served = async () => (await apiPages()).find((p) => p.id === page.id)
      const save = (fields: Record<string, string>) =>
        editor.post(`/admin/pages/${page.id}`, {
          slug: 'long-live',
          path: '/long-live',
          pageType: 'page',
          ...fields,
        })

      const form = await editor.get(`/admin/pages/${page.id}/edit`)
      expect(form.body).toContain('value="/long-live"')
      expect(form.body).toMatch(/id="field-isPublished"[^>]* checked/)
      expect(textOf(form)).toContain('Published since 2023-05-01 08:00 UTC')

      expect((await save({ title: 'Long live the page', isPublished: 'true' })).statusCode).toBe(303)
      expect(await served()).toMatchObject({
        title: 'Long live the page',
        isPublished: true,
        publishedAt: '2023-05-01T08:00:00Z',
      })

      expect((await save({ title: 'Long live the page' })).statusCode).toBe(303)
      expect(await served()).toMatchObject({ isPublished: false, publishedAt: null })
      expect(await apiPages('&published=true')).not.toContainEqual(expect.objectContaining({ id: page.id }))

      expect((await save({ title: 'Long live the page', isPublished: 'true' })).statusCode).toBe(303)
      const republished = await served()
      expect(republished?.publishedAt).toMatch(TIMESTAMP)
      expect(republished?.publishedAt).not.toBe('2023-05-01T08:00:00Z')

      const changes = (await auditOf('page.updated', page.id)).map((entry) => entry.detail)
      expect(changes).toEqual([
        { title: 'Long live the page', previous: { title: 'Long live' } },
        { isPublished: false, previous: { isPublished: true } },
        { isPublished: true, previous: { isPublished: false } },
      ])
    })

    it.each([
      ['a blank title', { title: '' }, 'title', 'Title must not be empty'],
      [
        'a title too long',
        { title: 't'.repeat(201) },
        'title',
        'Title must be at most 200 characters (got 201)',
      ],
      ['a path without its leading slash', { path: 'about' }, 'path', "Path must start with '/'"],
      ['a blank path', { path: '  ' }, 'path', 'Path must not be empty'],
      [
        'a path too long',
        { path: `/${'p'.repeat(2048)}` },
        'path',
        'Path must be at most 2048 characters (got 2049)',
      ],
      [
        'a NUL byte in the slug',
        { slug: 'a\u0000b' },
        'slug',
        'Slug must not contain NUL (\\u0000) characters',
      ],
      [
        'a type too long',
        { pageType: 'y'.repeat(101) },
        'pageType',
        'Type must be at most 100 characters (got 101)',
      ],
    ])(
      'refuses %s beside the field, keeps what was typed, and writes nothing',
      async (_label, fields, name, message) => {
        const [pages, audit] = [await countRows('pages'), (await contentAudit()).length]
        const res = await createPage({
          title: 'Typed title',
          slug: 'typed',
          path: '/typed',
          isPublished: 'true',
          ...fields,
        })
        expectProblemBeside(res, name, message)
        if (name !== 'title') expect(fieldMarkup(res, 'title')).toContain('value="Typed title"')
        expect(res.body).toMatch(/id="field-isPublished"[^>]* checked/)
        expect(await countRows('pages')).toBe(pages)
        expect((await contentAudit()).length).toBe(audit)
      },
    )

    it('lists every problem of a page at once, each beside its own field', async () => {
      const res = await createPage({ title: '', slug: 'ok', path: 'nope' })
      expectProblemBeside(res, 'title', 'Title must not be empty')
      expectProblemBeside(res, 'path', "Path must start with '/'")
      expect(fieldMarkup(res, 'slug')).not.toContain('aria-invalid')
      expect(textOf(res)).toContain('There are 2 problems')
    })

    it('refuses a path another page has, on create and on edit, naming that page', async () => {
      await buildPage(db(), { title: 'Holder', path: '/taken' })
      const mover = await buildPage(db(), { title: 'Mover', path: '/mover' })
      const [pages, audit] = [await countRows('pages'), (await contentAudit()).length]

      const created = await createPage({ title: 'Second', slug: 'taken', path: '/taken' })
      expectProblemBeside(created, 'path', 'Path /taken is already the path of the page “Holder”')
      expect(fieldMarkup(created, 'path')).toContain('value="/taken"')

      await editor.get(`/admin/pages/${mover.id}/edit`)
      const moved = await editor.post(`/admin/pages/${mover.id}`, {
        title: 'Mover',
        slug: 'm',
        path: '/taken',
      })
      expectProblemBeside(moved, 'path', 'Path /taken is already the path of the page “Holder”')

      expect(await countRows('pages')).toBe(pages)
      expect((await contentAudit()).length).toBe(audit)
      expect((await apiPages()).find((p) => p.id === mover.id)).toMatchObject({
        title: 'Mover',
        path: '/mover',
      })
    })

    it('asks before deleting a page, then deletes it and the API forgets it', async () => {
      const page = await buildPage(db(), { title: 'Farewell', path: '/farewell' })
      expect((await apiPages()).map((p) => p.id)).toContain(page.id)
      const confirm = await editor.get(`/admin/pages/${page.id}/delete`)
      expect(textOf(confirm)).toContain('Delete the page “Farewell”?')
      expect(textOf(confirm)).toContain('/farewell')
      expect((await apiPages()).map((p) => p.id)).toContain(page.id)
      const res = await editor.post(`/admin/pages/${page.id}/delete`)
      expect(res.statusCode).toBe(303)
      expect(res.headers.location).toBe('/admin/pages')
      expect(textOf(await editor.get('/admin/pages'))).toContain('Page “Farewell” at /farewell deleted.')
      expect((await apiPages()).map((p) => p.id)).not.toContain(page.id)
      expect(await auditOf('page.deleted', page.id)).toEqual([
        expect.objectContaining({ actor: editorEmail, detail: { title: 'Farewell', path: '/farewell' } }),
      ])
      // Its path is free again.
      expect(createdId(await createPage({ title: 'Reborn', slug: 'farewell', path: '/farewell' }))).not.toBe(
        page.id,
      )
    })
  })

  describe('who may author, and how', () => {
    it('refuses a viewer every authoring page and action, and shows them no button for one', async () => {
      const form = await buildForm(db(), { title: 'Viewer cannot touch' })
      const page = await buildPage(db(), { title: 'Viewer cannot touch', path: '/viewer-cannot' })
      const [forms, pages] = [await countRows('forms'), await countRows('pages')]
      await viewer.get('/admin/pages')
      const attempts: [string, string, Record<string, string>?][] = [
        ['GET', '/admin/forms/new'],
        ['POST', '/admin/forms', { title: 'By a viewer', isActive: 'true' }],
        ['GET', `/admin/forms/${form.id}/edit`],
        ['POST', `/admin/forms/${form.id}`, { title: 'Changed by a viewer' }],
        ['GET', `/admin/forms/${form.id}/delete`],
        ['POST', `/admin/forms/${form.id}/delete`, {}],
        ['GET', '/admin/pages/new'],
        ['POST', '/admin/pages', { title: 'By a viewer', slug: 'v', path: '/by-viewer' }],
        ['GET', `/admin/pages/${page.id}/edit`],
        ['POST', `/admin/pages/${page.id}`, { title: 'Changed', slug: 'c', path: '/viewer-cannot' }],
        ['GET', `/admin/pages/${page.id}/delete`],
        ['POST', `/admin/pages/${page.id}/delete`, {}],
      ]
      for (const [method, url, fields] of attempts) {
        const res = method === 'GET' ? await viewer.get(url) : await viewer.post(url, fields)
        expect({ method, url, status: res.statusCode }).toEqual({ method, url, status: 403 })
      }
      expect([await countRows('forms'), await countRows('pages')]).toEqual([forms, pages])
      expect(await auditOf('form.updated', form.id)).toEqual([])
      const list = await viewer.get('/admin/pages')
      expect(textOf(list)).not.toContain('New page')
      expect(list.body).not.toContain(`/admin/pages/${page.id}/edit`)
      expect(list.body).not.toContain(`/admin/pages/${page.id}/delete`)
    })

    it('refuses a change without the CSRF token and writes nothing', async () => {
      const form = await buildForm(db(), { title: 'Guarded' })
      const [forms, audit] = [await countRows('forms'), (await contentAudit()).length]
      await editor.get('/admin/forms/new')
      for (const [url, fields] of [
        ['/admin/forms', { title: 'Forged', isActive: 'true' }],
        [`/admin/forms/${form.id}`, { title: 'Forged' }],
        [`/admin/forms/${form.id}/delete`, {}],
        ['/admin/pages', { title: 'Forged', slug: 'f', path: '/forged' }],
      ] as const) {
        const res = await editor.post(url, { ...fields, _csrf: '' })
        expect({ url, status: res.statusCode }).toEqual({ url, status: 403 })
        expect(textOf(res)).toContain('This form has expired')
      }
      expect(await countRows('forms')).toBe(forms)
      expect((await apiForms()).find((f) => f.id === form.id)?.title).toBe('Guarded')
      expect((await contentAudit()).length).toBe(audit)
    })

    it('lets a global admin author too, and escapes what was typed on every authoring page', async () => {
      const { client: admin } = await signedInClient(app, db(), 'global_admin')
      const hostile = '"><script>alert(1)</script>'
      await admin.get('/admin/forms/new')
      const formId = createdId(await admin.post('/admin/forms', { title: hostile, description: hostile }))
      await admin.get('/admin/pages/new')
      const pageId = createdId(
        await admin.post('/admin/pages', {
          title: hostile,
          slug: hostile,
          path: `/${hostile}`,
          pageType: '',
        }),
      )
      for (const url of [
        '/admin/forms',
        `/admin/forms/${formId}/edit`,
        `/admin/forms/${formId}/delete`,
        '/admin/pages',
        `/admin/pages/${pageId}/edit`,
        `/admin/pages/${pageId}/delete`,
      ]) {
        const res = await admin.get(url)
        expect({ url, status: res.statusCode }).toEqual({ url, status: 200 })
        expect(res.body, url).not.toContain('<script>alert(1)')
        expect(res.body, url).toContain('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;')
      }
      const refused = await admin.post(`/admin/pages/${pageId}`, { title: '', slug: hostile, path: hostile })
      expect(refused.statusCode).toBe(422)
      expect(refused.body).not.toContain('<script>alert(1)')
    })

    it('answers 404 for a form or page that does not exist, or an id outside the id alphabet', async () => {
      for (const url of [
        '/admin/forms/form_missing/edit',
        '/admin/forms/form_missing/delete',
        '/admin/pages/page_missing/edit',
        '/admin/pages/page_missing/delete',
        '/admin/pages/a%2F..%2Fb/edit',
      ]) {
        expect({ url, status: (await editor.get(url)).statusCode }).toEqual({ url, status: 404 })
      }
      await editor.get('/admin/forms')
      const res = await editor.post('/admin/pages/page_missing', {
        title: 'Ghost',
        slug: 'g',
        path: '/ghost',
      })
      expect(res.statusCode).toBe(404)
      expect((await apiPages()).map((p) => p.path)).not.toContain('/ghost')
    })

    it('makes no change whose audit entry cannot be written: the change and its entry are one transaction', async () => {
      const form = await buildForm(db(), { title: 'Survivor' })
      await buildSubmission(db(), { formId: form.id })
      const page = await buildPage(db(), { title: 'Unmoved', path: '/unmoved' })
      const [forms, pages, submissions] = [
        await countRows('forms'),
        await countRows('pages'),
        await countRows('submissions'),
      ]
      await sql`alter table ${sql.table('audit_log')} rename to ${sql.table('audit_log_away')}`.execute(db())
      try {
        await editor.get('/admin/forms/new')
        const attempts = [
          await editor.post('/admin/forms', { title: 'Never made', isActive: 'true' }),
          await editor.post(`/admin/forms/${form.id}`, { title: 'Never renamed' }),
          await editor.post(`/admin/forms/${form.id}/delete`),
          await editor.post('/admin/pages', { title: 'Never made', slug: 'n', path: '/never' }),
          await editor.post(`/admin/pages/${page.id}`, { title: 'Moved', slug: 'm', path: '/moved' }),
          await editor.post(`/admin/pages/${page.id}/delete`),
        ]
        expect(attempts.map((res) => res.statusCode)).toEqual([500, 500, 500, 500, 500, 500])
      } finally {
        await sql`alter table ${sql.table('audit_log_away')} rename to ${sql.table('audit_log')}`.execute(
          db(),
        )
      }
      expect([await countRows('forms'), await countRows('pages'), await countRows('submissions')]).toEqual([
        forms,
        pages,
        submissions,
      ])
      expect((await apiForms()).find((f) => f.id === form.id)?.title).toBe('Survivor')
      expect((await apiPages()).find((p) => p.id === page.id)).toMatchObject({
        title: 'Unmoved',
        path: '/unmoved',
      })
    })
  })
})
