import { parse } from 'csv-parse/sync'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Submission } from '../../src/schemas.js'
import { buildApiKey, buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectList, GENEROUS_LIMITS, request } from '../security-suite.js'
import { type DashboardClient, rowText, signedInClient, textOf } from './support.js'

const at = (n: number) => new Date(Date.UTC(2024, 2, 1, 10, 0, n)).toISOString().replace('.000Z', 'Z')

/** Posts a form whose `ids` field repeats, as the inbox's checkboxes send it. */
function postSelection(
  client: DashboardClient,
  url: string,
  fields: Record<string, string>,
  ids: readonly string[],
  csrf = client.csrf,
): Promise<LightMyRequestResponse> {
  const body = new URLSearchParams({ _csrf: csrf, ...fields })
  for (const id of ids) body.append('ids', id)
  return client.request({
    method: 'POST',
    url,
    payload: body.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
}

/** The ids of the submissions a dashboard page shows, in the page's order. */
const shownIds = (res: LightMyRequestResponse) =>
  [...res.body.matchAll(/id="submission-(submission_[A-Za-z0-9_]+)"/g)].map((match) => match[1])

describe('the submission inbox', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let admin: DashboardClient
  let adminEmail: string
  let key: string

  const apiSubmissions = async (formId: string): Promise<Submission[]> => {
    const items: Submission[] = []
    for (let page = 1; ; page++) {
      const list = expectList<Submission>(
        await request(app, `/api/v1/forms/${formId}/submissions?pageSize=100&page=${page}`, key),
      )
      items.push(...list.data)
      if (page >= list.meta.totalPages) return items
    }
  }

  const auditEntries = (action: string, target?: string) => {
    let query = ctx.database.db.selectFrom('audit_log').selectAll().where('action', '=', action)
    if (target !== undefined) query = query.where('target', '=', target)
    return query.orderBy('id').execute()
  }

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    const signedIn = await signedInClient(app, ctx.database.db)
    admin = signedIn.client
    adminEmail = signedIn.user.email
    key = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  /** A form with six submissions: s0 newest … s5 oldest; s1 and s3 unread, s2 and s3 starred. */
  async function inboxForm(title: string) {
    const form = await buildForm(ctx.database.db, { title })
    const prefix = `submission_${form.id.slice(5, 15)}`
    const rows = [
      { data: { email: 'ada@example.com', message: 'Hello there' }, isRead: true },
      { data: { email: 'grace@example.com', message: 'About 100% of the budget' }, isRead: false },
      { data: { email: 'linus@example.com', message: 'Say "hi"' }, isRead: true, isStarred: true },
      {
        data: { email: 'MARGARET@EXAMPLE.COM', message: 'Moon' },
        isRead: false,
        isStarred: true,
        notes: 'Call back Tuesday',
      },
      { data: { email: 'ken@example.com', message: 'under_score' }, isRead: true },
      { data: { email: 'barbara@example.com', message: 'Last' }, isRead: true },
    ]
    const ids: string[] = []
    for (const [index, row] of rows.entries()) {
      const id = `${prefix}${index}`
      ids.push(id)
      await buildSubmission(ctx.database.db, { formId: form.id, id, createdAt: at(100 - index), ...row })
    }
    return { form, ids }
  }

  it('shows a form’s submissions as cards or as a compact table, the choice kept in the address', async () => {
    const { form, ids } = await inboxForm('Switching views')
    const cards = await admin.get(`/admin/forms/${form.id}/submissions`)
    expect(cards.statusCode).toBe(200)
    expect(cards.body).toContain('<article class="submission')
    expect(shownIds(cards)).toEqual(ids)
    expect(cards.body).toContain(`href="/admin/forms/${form.id}/submissions?view=table"`)
    const table = await admin.get(`/admin/forms/${form.id}/submissions?view=table`)
    expect(table.body).not.toContain('<article class="submission')
    expect(shownIds(table)).toEqual(ids)
    expect(rowText(table, `submission-${ids[3]}`)).toMatch(
      /email: MARGARET@EXAMPLE\.COM · message: Moon .*Unread .*Starred .*Call back Tuesday/,
    )
    // A new search from the table view stays in the table view.
    expect(table.body).toContain('<input type="hidden" name="view" value="table">')
  })

  it('shows the form’s id for the API as selectable text, with a copy button the script reveals, on its inbox and its editor', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Its id' })
    for (const page of [`/admin/forms/${form.id}/submissions`, `/admin/forms/${form.id}/edit`]) {
      const res = await admin.get(page)
      expect(res.statusCode, page).toBe(200)
      expect(res.body, page).toContain(`<code id="form-id">${form.id}</code>`)
      // Without the script nothing could copy, so the button starts hidden and the id stays selectable.
      expect(res.body, page).toMatch(
        /<button type="button"[^>]*data-copy-target="form-id"[^>]*hidden>Copy<\/button>/,
      )
    }
    // The id shown is the one the API answers to.
    expect((await request(app, `/api/v1/forms/${form.id}/submissions`, key)).statusCode).toBe(200)
    expect((await admin.get('/admin/forms/new')).body).not.toContain('id="form-id"')
  })

  it('filters unread and starred submissions, sorts oldest first and pages with the chosen size', async () => {
    const { form, ids } = await inboxForm('Filtering')
    const base = `/admin/forms/${form.id}/submissions`
    expect(shownIds(await admin.get(`${base}?filter=unread`))).toEqual([ids[1], ids[3]])
    expect(shownIds(await admin.get(`${base}?filter=starred`))).toEqual([ids[2], ids[3]])
    expect(shownIds(await admin.get(`${base}?sort=oldest`))).toEqual([...ids].reverse())
    const many = await buildForm(ctx.database.db, { title: 'Paged' })
    for (let i = 0; i < 60; i++) await buildSubmission(ctx.database.db, { formId: many.id, createdAt: at(i) })
    const pageOne = await admin.get(`/admin/forms/${many.id}/submissions?size=50&view=table`)
    expect(shownIds(pageOne)).toHaveLength(50)
    expect(textOf(pageOne)).toContain('Page 1 of 2')
    expect(pageOne.body).toContain(
      `href="/admin/forms/${many.id}/submissions?view=table&amp;size=50&amp;page=2"`,
    )
    const pageTwo = await admin.get(`/admin/forms/${many.id}/submissions?view=table&size=50&page=2`)
    expect(shownIds(pageTwo)).toHaveLength(10)
    // The second page is read from the end of the order, and still follows the first, in order.
    const everyId = (await apiSubmissions(many.id)).map((submission) => submission.id)
    expect([...shownIds(pageOne), ...shownIds(pageTwo)]).toEqual(everyId)
    const past = await admin.get(`/admin/forms/${many.id}/submissions?size=50&page=9`)
    expect(past.statusCode).toBe(303)
    expect(past.headers.location).toBe(`/admin/forms/${many.id}/submissions?size=50&page=2`)
  })

  it('searches the submitted data and the notes, ignoring case and taking % _ and quotes literally', async () => {
    const { form, ids } = await inboxForm('Searching')
    const search = async (q: string, extra = '') =>
      shownIds(await admin.get(`/admin/forms/${form.id}/submissions?q=${encodeURIComponent(q)}${extra}`))
    expect(await search('margaret@example')).toEqual([ids[3]])
    expect(await search('HELLO')).toEqual([ids[0]])
    expect(await search('call back')).toEqual([ids[3]])
    expect(await search('100%')).toEqual([ids[1]])
    expect(await search('%')).toEqual([ids[1]])
    expect(await search('_')).toEqual([ids[4]])
    expect(await search('"hi"')).toEqual([ids[2]])
    expect(await search('example.com', '&filter=starred&sort=oldest')).toEqual([ids[3], ids[2]])
    expect(await search('nobody wrote this')).toEqual([])
    const tooLong = await admin.get(`/admin/forms/${form.id}/submissions?q=${'x'.repeat(201)}`)
    expect(tooLong.statusCode).toBe(200)
    expect(textOf(tooLong)).toContain('The search must be at most 200 characters. The search was not used.')
    expect(shownIds(tooLong)).toEqual(ids)
  })

  it('marks many submissions read, unread, starred and unstarred in one post, back to the same view', async () => {
    const { form, ids } = await inboxForm('Bulk flags')
    const other = await inboxForm('Another form')
    const view = `/admin/forms/${form.id}/submissions?view=table&filter=unread&q=example`
    await admin.get(view)
    const res = await postSelection(
      admin,
      `/admin/forms/${form.id}/submissions/bulk`,
      { action: 'read', view: 'table', filter: 'unread', q: 'example' },
      [ids[1] as string, ids[3] as string, other.ids[1] as string],
    )
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`${view}&page=1`)
    const after = await admin.get(res.headers.location as string)
    expect(textOf(after)).toContain('2 submissions marked as read.')
    expect(textOf(after)).toContain('Nothing in this view')
    const api = await apiSubmissions(form.id)
    expect(api.every((submission) => submission.isRead)).toBe(true)
    // The other form's submission was selected by a hand-made post, and left alone.
    expect((await apiSubmissions(other.form.id)).find((s) => s.id === other.ids[1])?.isRead).toBe(false)
    const [entry] = await auditEntries('submissions.updated', form.id)
    expect(entry?.actor).toBe(adminEmail)
    expect(JSON.parse(entry?.detail as string)).toEqual({
      count: 2,
      ids: [ids[1], ids[3]].sort(),
      isRead: true,
    })

    for (const [action, check] of [
      ['unread', (s: Submission) => !s.isRead],
      ['star', (s: Submission) => s.isStarred],
      ['unstar', (s: Submission) => !s.isStarred],
    ] as const) {
      await postSelection(admin, `/admin/forms/${form.id}/submissions/bulk`, { action }, [
        ids[0] as string,
        ids[5] as string,
      ])
      const changed = (await apiSubmissions(form.id)).filter((s) => s.id === ids[0] || s.id === ids[5])
      expect(changed.every(check)).toBe(true)
    }
    expect(await auditEntries('submissions.updated', form.id)).toHaveLength(4)
  })

  it('asks before deleting many submissions, then deletes them, audited, and the API stops listing them at once', async () => {
    const { form, ids } = await inboxForm('Bulk delete')
    expect(await apiSubmissions(form.id)).toHaveLength(6)
    await admin.get(`/admin/forms/${form.id}/submissions?view=table`)
    const asked = await postSelection(
      admin,
      `/admin/forms/${form.id}/submissions/bulk`,
      { action: 'delete', view: 'table' },
      [ids[0] as string, ids[2] as string],
    )
    expect(asked.statusCode).toBe(200)
    expect(textOf(asked)).toContain('Delete 2 submissions?')
    expect(asked.body).toContain(`name="ids" value="${ids[0]}"`)
    expect(asked.body).toContain(`name="ids" value="${ids[2]}"`)
    expect(asked.body).toContain('name="view" value="table"')
    // Listed in the view's order, newest first, as the inbox showed them.
    expect(asked.body.indexOf(`value="${ids[0]}"`)).toBeLessThan(asked.body.indexOf(`value="${ids[2]}"`))
    // Asking erased nothing and recorded nothing.
    expect(await apiSubmissions(form.id)).toHaveLength(6)
    expect(await auditEntries('submissions.deleted', form.id)).toEqual([])

    const res = await postSelection(
      admin,
      `/admin/forms/${form.id}/submissions/bulk`,
      { action: 'delete', confirmed: 'yes' },
      [ids[0] as string, ids[2] as string],
    )
    expect(res.headers.location).toBe(`/admin/forms/${form.id}/submissions?page=1`)
    expect(textOf(await admin.get(res.headers.location as string))).toContain('2 submissions deleted.')
    expect((await apiSubmissions(form.id)).map((s) => s.id)).toEqual([ids[1], ids[3], ids[4], ids[5]])
    const [entry] = await auditEntries('submissions.deleted', form.id)
    expect(JSON.parse(entry?.detail as string)).toEqual({ count: 2, ids: [ids[0], ids[2]].sort() })
  })

  it('refuses a bulk change without the CSRF token or from a role that may not read submissions, writing no audit entry', async () => {
    const { form, ids } = await inboxForm('Refused bulk')
    const before = await ctx.database.db.selectFrom('audit_log').select('id').execute()
    const url = `/admin/forms/${form.id}/submissions/bulk`
    await admin.get(`/admin/forms/${form.id}/submissions`)
    const forged = await postSelection(admin, url, { action: 'delete' }, ids, 'not-the-token')
    expect(forged.statusCode).toBe(403)
    const editor = (await signedInClient(app, ctx.database.db, 'editor')).client
    const viewer = (await signedInClient(app, ctx.database.db, 'viewer')).client
    for (const client of [editor, viewer]) {
      expect((await postSelection(client, url, { action: 'delete' }, ids)).statusCode).toBe(403)
      expect((await postSelection(client, url, { action: 'read' }, ids)).statusCode).toBe(403)
      expect((await client.post(`/admin/submissions/${ids[0]}/delete`)).statusCode).toBe(403)
    }
    expect(await apiSubmissions(form.id)).toHaveLength(6)
    expect((await apiSubmissions(form.id)).filter((s) => !s.isRead)).toHaveLength(2)
    // Sign-ins of the new users are the only entries since.
    const added = await ctx.database.db
      .selectFrom('audit_log')
      .select('action')
      .where(
        'id',
        'not in',
        before.map((row) => row.id),
      )
      .execute()
    expect(added.map((row) => row.action).filter((action) => action !== 'session.signed_in')).toEqual([])
  })

  it('refuses the inbox, its export and the delete page to roles that may not read submissions', async () => {
    const { form, ids } = await inboxForm('Closed inbox')
    for (const role of ['editor', 'viewer'] as const) {
      const client = (await signedInClient(app, ctx.database.db, role)).client
      for (const url of [
        `/admin/forms/${form.id}/submissions?view=table`,
        `/admin/forms/${form.id}/submissions/export?format=csv`,
        `/admin/forms/${form.id}/submissions/export?format=json`,
        `/admin/submissions/${ids[0]}/delete`,
      ]) {
        const res = await client.get(url)
        expect({ url, role, status: res.statusCode }).toEqual({ url, role, status: 403 })
        expect(res.body).not.toContain('grace@example.com')
      }
    }
    expect(await auditEntries('submissions.exported', form.id)).toEqual([])
  })

  it('exports the current view as CSV that reads back as the API’s submissions, audited with the count (a HEAD request exports nothing)', async () => {
    const { form, ids } = await inboxForm('CSV export')
    const head = await admin.request({
      method: 'HEAD',
      url: `/admin/forms/${form.id}/submissions/export?format=csv`,
    })
    expect(head.statusCode).toBe(200)
    expect(head.body).toBe('')
    const res = await admin.get(`/admin/forms/${form.id}/submissions/export?format=csv&q=example&filter=all`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="submissions-${form.id}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
    )
    const records = parse(res.body, { columns: true }) as Record<string, string>[]
    const api = await apiSubmissions(form.id)
    expect(records.map((record) => record.id)).toEqual(ids)
    for (const record of records) {
      const item = api.find((submission) => submission.id === record.id) as Submission
      expect({
        ...record,
        data: JSON.parse(record.data as string),
        isRead: record.isRead === 'true',
        isStarred: record.isStarred === 'true',
      }).toEqual({
        ...item,
        notes: item.notes ?? '',
        ipAddress: item.ipAddress ?? '',
        userAgent: item.userAgent ?? '',
        referrer: item.referrer ?? '',
        submittedBy: item.submittedBy ?? '',
      })
    }
    const starred = await admin.get(
      `/admin/forms/${form.id}/submissions/export?format=csv&filter=starred&sort=oldest`,
    )
    expect((parse(starred.body, { columns: true }) as { id: string }[]).map((r) => r.id)).toEqual([
      ids[3],
      ids[2],
    ])
    const entries = await auditEntries('submissions.exported', form.id)
    expect(entries.map((entry) => JSON.parse(entry.detail as string))).toEqual([
      { format: 'csv', count: 6, filter: 'all', sort: 'newest', searched: true },
      { format: 'csv', count: 2, filter: 'starred', sort: 'oldest', searched: false },
    ])
  })

  it('exports a view larger than one batch as JSON equal to the API’s items, in order', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Large export' })
    // Many share a timestamp, so the keyset must order and resume on the id as well.
    const rows = Array.from({ length: 4321 }, (_, i) => ({
      id: `submission_large${String(i).padStart(5, '0')}`,
      form_id: form.id,
      data: JSON.stringify({ n: i, text: i % 7 === 0 ? 'lucky seven' : 'plain' }),
      ip_address: null,
      user_agent: null,
      referrer: null,
      submitted_by: null,
      is_read: (i % 3 === 0 ? 1 : 0) as 0 | 1,
      is_starred: 0 as const,
      notes: null,
      created_at: at(i % 50),
      updated_at: at(i % 50),
    }))
    for (let i = 0; i < rows.length; i += 200)
      await ctx.database.db
        .insertInto('submissions')
        .values(rows.slice(i, i + 200))
        .execute()
    const res = await admin.get(`/admin/forms/${form.id}/submissions/export?format=json`)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename=".*\.json"$/)
    expect(res.json()).toEqual(await apiSubmissions(form.id))
    const unread = (
      await admin.get(`/admin/forms/${form.id}/submissions/export?format=json&filter=unread&q=LUCKY`)
    ).json() as Submission[]
    expect(unread.map((s) => s.data)).toEqual(
      (await apiSubmissions(form.id))
        .filter((s) => !s.isRead && s.data.text === 'lucky seven')
        .map((s) => s.data),
    )
    expect(unread.length).toBeGreaterThan(0)
    const empty = await buildForm(ctx.database.db, { title: 'Empty export' })
    expect((await admin.get(`/admin/forms/${empty.id}/submissions/export?format=json`)).json()).toEqual([])
    expect((await admin.get(`/admin/forms/${form.id}/submissions/export?format=xml`)).statusCode).toBe(400)
  })

  it('deletes one submission after a confirmation page, and the API no longer lists it', async () => {
    const { form, ids } = await inboxForm('Erasure')
    const target = ids[3] as string
    const confirm = await admin.get(`/admin/submissions/${target}/delete?view=table`)
    expect(confirm.statusCode).toBe(200)
    expect(textOf(confirm)).toContain('This cannot be undone.')
    expect(confirm.body).toContain(`action="/admin/submissions/${target}/delete?view=table&amp;page=1"`)
    expect((await apiSubmissions(form.id)).map((s) => s.id)).toContain(target)
    const res = await admin.post(`/admin/submissions/${target}/delete?view=table&page=1`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/admin/forms/${form.id}/submissions?view=table&page=1`)
    expect(textOf(await admin.get(res.headers.location as string))).toContain('The submission was deleted.')
    expect((await apiSubmissions(form.id)).map((s) => s.id)).not.toContain(target)
    const [entry] = await auditEntries('submissions.deleted', form.id)
    expect(JSON.parse(entry?.detail as string)).toEqual({ count: 1, ids: [target] })
    expect((await admin.get(`/admin/submissions/${target}/delete`)).statusCode).toBe(404)
  })

  it('counts unread submissions per form in the forms list and on the overview', async () => {
    const { form } = await inboxForm('Unread counts')
    const forms = await admin.get('/admin/forms?page=1')
    const pages = [forms]
    for (let page = 2; !pages.some((p) => p.body.includes(`id="form-${form.id}"`)); page++)
      pages.push(await admin.get(`/admin/forms?page=${page}`))
    const page = pages.find((p) => p.body.includes(`id="form-${form.id}"`)) as LightMyRequestResponse
    expect(rowText(page, `form-${form.id}`)).toMatch(/Unread counts .* 2 6 Active/)
    expect(page.body).toContain(`href="/admin/forms/${form.id}/submissions?filter=unread"`)
    const { total } = await ctx.database.db
      .selectFrom('submissions')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('is_read', '=', 0)
      .executeTakeFirstOrThrow()
    expect(textOf(await admin.get('/admin'))).toContain(`${Number(total)} unread submissions`)
  })
})
