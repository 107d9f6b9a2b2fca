import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm, buildPage, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectList, GENEROUS_LIMITS, request, TIMESTAMP } from '../security-suite.js'
import { type DashboardClient, rowText, signedInClient, textOf } from './support.js'

const at = (minute: number) => `2024-03-01T10:${String(minute).padStart(2, '0')}:00Z`

describe('forms, submissions and pages in the dashboard', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let admin: DashboardClient
  let key: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    admin = (await signedInClient(app, ctx.database.db)).client
    key = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  it('explains empty lists of forms and pages', async () => {
    expect(textOf(await admin.get('/admin/forms'))).toContain('No forms yet')
    expect(textOf(await admin.get('/admin/pages'))).toContain('No pages yet')
  })

  it('lists forms with their submission counts and active flag', async () => {
    const busy = await buildForm(ctx.database.db, { title: 'Busy form', createdAt: at(1) })
    const quiet = await buildForm(ctx.database.db, { title: 'Quiet form', active: false, createdAt: at(2) })
    for (let i = 0; i < 3; i++) await buildSubmission(ctx.database.db, { formId: busy.id })
    const page = await admin.get('/admin/forms')
    expect(rowText(page, `form-${busy.id}`)).toMatch(/Busy form .* 3 Active Edit Deactivate Delete…/)
    expect(rowText(page, `form-${quiet.id}`)).toMatch(/Quiet form .* 0 Inactive Edit Activate Delete…/)
  })

  it('switches a form off and on, and the API filter follows', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Toggled form' })
    const activeIds = async () =>
      expectList<{ id: string }>(await request(app, '/api/v1/forms?active=true&pageSize=100', key)).data.map(
        (f) => f.id,
      )
    expect(await activeIds()).toContain(form.id)
    await admin.get('/admin/forms')
    const res = await admin.post(`/admin/forms/${form.id}/active`, { active: 'false', page: '1' })
    expect(res.headers.location).toBe(`/admin/forms#form-${form.id}`)
    expect(textOf(await admin.get('/admin/forms'))).toContain('“Toggled form” is inactive.')
    expect(await activeIds()).not.toContain(form.id)
    await admin.post(`/admin/forms/${form.id}/active`, { active: 'true' })
    expect(await activeIds()).toContain(form.id)
  })

  it('pages through a form’s submissions, newest first, showing what was sent', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Many submissions' })
    for (let i = 0; i < 25; i++) {
      await buildSubmission(ctx.database.db, {
        formId: form.id,
        id: `submission_${String(i).padStart(2, '0')}`,
        createdAt: at(i),
        data: { name: `Sender ${i}`, tags: ['a', 'b'] },
        ipAddress: '203.0.113.9',
      })
    }
    const first = await admin.get(`/admin/forms/${form.id}/submissions`)
    expect(first.statusCode).toBe(200)
    const ids = (body: string) =>
      [...body.matchAll(/<article[^>]* id="submission-(submission_\d+)"/g)].map((m) => m[1])
    expect(ids(first.body)).toEqual(
      Array.from({ length: 20 }, (_, i) => `submission_${String(24 - i).padStart(2, '0')}`),
    )
    const card = rowText(first, 'submission-submission_24')
    expect(card).toContain('2024-03-01 10:24 UTC')
    expect(card).toContain('name Sender 24')
    expect(card).toContain('tags ["a","b"]')
    expect(card).toContain('203.0.113.9')
    expect(card).toContain('Unread')
    expect(textOf(first)).toContain('25 submissions, newest first')
    expect(textOf(first)).toContain('Page 1 of 2')
    expect(first.body).toContain(`href="/admin/forms/${form.id}/submissions?page=2"`)

    const second = await admin.get(`/admin/forms/${form.id}/submissions?page=2`)
    expect(ids(second.body)).toEqual([
      'submission_04',
      'submission_03',
      'submission_02',
      'submission_01',
      'submission_00',
    ])
  })

  it('marks a submission read and starred and keeps notes, and the API shows them afterwards', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Flagged' })
    const submission = await buildSubmission(ctx.database.db, { formId: form.id, createdAt: at(0) })
    await admin.get(`/admin/forms/${form.id}/submissions`)
    const read = await admin.post(`/admin/submissions/${submission.id}/read`, { read: 'true', page: '1' })
    expect(read.headers.location).toBe(
      `/admin/forms/${form.id}/submissions?page=1&changed=${submission.id}#submission-${submission.id}`,
    )
    await admin.post(`/admin/submissions/${submission.id}/star`, { starred: 'true', page: '1' })
    const saved = await admin.post(`/admin/submissions/${submission.id}/notes`, {
      notes: 'Called back <b>Tuesday</b>',
      page: '1',
    })

    // The page opens at the submission, so the message is said in its card, where the eye is.
    const page = await admin.get(String(saved.headers.location).split('#')[0] as string)
    const card = rowText(page, `submission-${submission.id}`)
    expect(card).toContain('Notes saved.')
    expect(textOf(page).split('Notes saved.')).toHaveLength(2)
    expect(card).toContain('Read')
    expect(card).toContain('★ Starred')
    expect(page.body).toContain('Called back &lt;b&gt;Tuesday&lt;/b&gt;</textarea>')

    const [item] = expectList<Record<string, unknown>>(
      await request(app, `/api/v1/forms/${form.id}/submissions`, key),
    ).data
    expect(item).toMatchObject({
      id: submission.id,
      isRead: true,
      isStarred: true,
      notes: 'Called back <b>Tuesday</b>',
    })
    expect(item?.updatedAt).toEqual(expect.stringMatching(TIMESTAMP))

    await admin.post(`/admin/submissions/${submission.id}/read`, { read: 'false' })
    await admin.post(`/admin/submissions/${submission.id}/star`, { starred: 'false' })
    await admin.post(`/admin/submissions/${submission.id}/notes`, { notes: '   ' })
    const [after] = expectList<Record<string, unknown>>(
      await request(app, `/api/v1/forms/${form.id}/submissions`, key),
    ).data
    expect(after).toMatchObject({ isRead: false, isStarred: false, notes: null })
  })

  it('explains a form without submissions, and answers 404 for a form that does not exist', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Empty form' })
    expect(textOf(await admin.get(`/admin/forms/${form.id}/submissions`))).toContain('No submissions yet')
    const missing = await admin.get('/admin/forms/form_missing/submissions')
    expect(missing.statusCode).toBe(404)
    expect(textOf(missing)).toContain("Form 'form_missing' not found")
  })

  it('lists pages with their published state, and publishing follows through to the API', async () => {
    const draft = await buildPage(ctx.database.db, { title: 'Draft page', published: false, path: '/draft' })
    const live = await buildPage(ctx.database.db, {
      title: 'Live page',
      published: true,
      path: '/live',
      createdAt: at(5),
    })
    const list = await admin.get('/admin/pages')
    expect(rowText(list, `page-${draft.id}`)).toMatch(/Draft page \/draft page Draft Edit Publish Delete…/)
    expect(rowText(list, `page-${live.id}`)).toContain('Published since 2024-03-01 10:05 UTC')

    await admin.post(`/admin/pages/${draft.id}/published`, { published: 'true' })
    await admin.post(`/admin/pages/${live.id}/published`, { published: 'false' })
    expect(textOf(await admin.get('/admin/pages'))).toContain('“Live page” is now a draft.')
    const pages = expectList<{ id: string; isPublished: boolean; publishedAt: string | null }>(
      await request(app, '/api/v1/page-builder?pageSize=100', key),
    ).data
    expect(pages.find((p) => p.id === draft.id)).toMatchObject({
      isPublished: true,
      publishedAt: expect.stringMatching(TIMESTAMP),
    })
    expect(pages.find((p) => p.id === live.id)).toMatchObject({ isPublished: false, publishedAt: null })
  })
})
