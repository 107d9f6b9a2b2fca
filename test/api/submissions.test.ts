import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request, TIMESTAMP } from '../security-suite.js'

const SUBMISSION_FIELDS = [
  'id',
  'data',
  'ipAddress',
  'userAgent',
  'referrer',
  'submittedBy',
  'isRead',
  'isStarred',
  'notes',
  'createdAt',
  'updatedAt',
]

describe('GET /api/v1/forms/{id}/submissions', () => {
  let ctx: TestContext
  let auth: string
  const list = (formId: string, query = '') =>
    request(ctx.app, `/api/v1/forms/${encodeURIComponent(formId)}/submissions${query}`, auth)

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    const db = ctx.database.db
    auth = (await buildApiKey(db)).authorization
    await buildForm(db, { id: 'form_contact' })
    await buildForm(db, { id: 'form_other' })
    await buildForm(db, { id: 'form_empty' })
    await buildForm(db, { id: 'form_inactive', active: false })
    await buildSubmission(db, {
      formId: 'form_contact',
      id: 'submission_full',
      data: { email: 'ada@example.com', nested: { tags: ['a', 'b'], n: 1.5, ok: true, none: null } },
      ipAddress: '203.0.113.7',
      userAgent: 'Mozilla/5.0',
      referrer: 'https://example.com/contact',
      submittedBy: 'user_1',
      isRead: true,
      isStarred: true,
      notes: 'called back',
      createdAt: '2024-01-05T10:00:00Z',
    })
    // Three share a createdAt: newest first means id descending among them.
    for (const id of ['submission_tie_b', 'submission_tie_c', 'submission_tie_a']) {
      await buildSubmission(db, { formId: 'form_contact', id, createdAt: '2024-02-01T12:00:00Z' })
    }
    await buildSubmission(db, {
      formId: 'form_contact',
      id: 'submission_old',
      createdAt: '2023-12-31T23:59:59Z',
    })
    await buildSubmission(db, {
      formId: 'form_contact',
      id: 'submission_new',
      createdAt: '2024-06-01T00:00:00Z',
    })
    await buildSubmission(db, {
      formId: 'form_other',
      id: 'submission_of_other',
      createdAt: '2024-07-01T00:00:00Z',
    })
    await buildSubmission(db, { formId: 'form_inactive', id: 'submission_of_inactive' })
  })
  afterAll(() => ctx.close())

  it('shows each submission with exactly the SPEC fields, in order', async () => {
    const { data } = expectList(await list('form_contact'))
    expect(data.length).toBe(6)
    for (const submission of data) expect(Object.keys(submission)).toEqual(SUBMISSION_FIELDS)
  })

  it('shows every field of a submission with its value and type', async () => {
    const { data } = expectList(await list('form_contact'))
    expect(data.find((s) => s.id === 'submission_full')).toEqual({
      id: 'submission_full',
      data: { email: 'ada@example.com', nested: { tags: ['a', 'b'], n: 1.5, ok: true, none: null } },
      ipAddress: '203.0.113.7',
      userAgent: 'Mozilla/5.0',
      referrer: 'https://example.com/contact',
      submittedBy: 'user_1',
      isRead: true,
      isStarred: true,
      notes: 'called back',
      createdAt: '2024-01-05T10:00:00Z',
      updatedAt: '2024-01-05T10:00:00Z',
    })
  })

  it('shows missing optional fields as null and flags as false', async () => {
    const { data } = expectList(await list('form_contact'))
    const bare = data.find((s) => s.id === 'submission_old')
    expect(bare).toMatchObject({
      ipAddress: null,
      userAgent: null,
      referrer: null,
      submittedBy: null,
      isRead: false,
      isStarred: false,
      notes: null,
    })
    expect(bare?.data).toEqual({ email: 'ada@example.com', message: 'Hello' })
  })

  it('writes timestamps as UTC with second precision and a Z suffix', async () => {
    const { data } = expectList(await list('form_contact'))
    for (const submission of data) {
      expect(submission.createdAt).toMatch(TIMESTAMP)
      expect(submission.updatedAt).toMatch(TIMESTAMP)
    }
  })

  it('orders submissions newest first, breaking ties by id descending', async () => {
    const { data } = expectList(await list('form_contact'))
    expect(data.map((s) => s.id)).toEqual([
      'submission_new',
      'submission_tie_c',
      'submission_tie_b',
      'submission_tie_a',
      'submission_full',
      'submission_old',
    ])
  })

  it('keeps that order across pages', async () => {
    const ids: unknown[] = []
    for (let page = 1; page <= 3; page++) {
      const { data, meta } = expectList(await list('form_contact', `?pageSize=2&page=${page}`))
      expect(meta).toEqual({ total: 6, page, pageSize: 2, totalPages: 3 })
      ids.push(...data.map((s) => s.id))
    }
    expect(ids).toEqual([
      'submission_new',
      'submission_tie_c',
      'submission_tie_b',
      'submission_tie_a',
      'submission_full',
      'submission_old',
    ])
  })

  it("lists only the requested form's submissions and counts only them", async () => {
    const contact = expectList(await list('form_contact'))
    expect(contact.meta.total).toBe(6)
    expect(contact.data.map((s) => s.id)).not.toContain('submission_of_other')
    const other = expectList(await list('form_other'))
    expect(other.data.map((s) => s.id)).toEqual(['submission_of_other'])
    expect(other.meta).toEqual({ total: 1, page: 1, pageSize: 20, totalPages: 1 })
  })

  it('lists the submissions of an inactive form too', async () => {
    const { data } = expectList(await list('form_inactive'))
    expect(data.map((s) => s.id)).toEqual(['submission_of_inactive'])
  })

  it('answers 200 with an empty list for a form that has no submissions', async () => {
    expect(expectList(await list('form_empty'))).toEqual({
      data: [],
      meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 },
    })
  })

  it('answers 404 resource_not_found naming the form for an unknown form id', async () => {
    const body = expectError(await list('form_x'), 404, 'resource_not_found')
    expect(body.message).toContain("'form_x'")
  })

  it.each([
    ['differs only in case', 'FORM_CONTACT'],
    ['contains a space and unicode', 'form ü x'],
    ['is 600 characters long', `form_${'x'.repeat(595)}`],
  ])('answers 404 naming the form for an unknown id that %s', async (_, formId) => {
    const body = expectError(await list(formId), 404, 'resource_not_found')
    expect(body.message).toContain(formId)
  })

  it('asks for a key before anything else, however long the form id', async () => {
    const res = await request(ctx.app, `/api/v1/forms/form_${'x'.repeat(2000)}/submissions`)
    expectError(res, 401, 'missing_authorization_header')
  })

  it('checks that the form exists before the query parameters are of any use', async () => {
    expectError(await list('form_x', '?page=2'), 404, 'resource_not_found')
  })

  it('ignores the active filter, which submissions do not know', async () => {
    const { meta } = expectList(await list('form_contact', '?active=yes&published=no'))
    expect(meta.total).toBe(6)
  })
})
