import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { buildApiKey, buildForm, buildPage, buildRedirect, buildSubmission } from '../../../test/factories.js'
import { GENEROUS_LIMITS } from '../../../test/security-suite.js'
import {
  AuthenticationError,
  type Form,
  InvalidRequestError,
  Lectern,
  LecternError,
  NotFoundError,
  type Page,
  PermissionError,
  type Submission,
  Submissions,
  type SyncResult,
} from '../src/index.js'
import { listOf, type RunningLectern, recordingFetch, startLectern, startMisbehaving } from './support.js'

const day = (n: number) => `2024-01-${String(n).padStart(2, '0')}T10:00:00Z`

describe('the TypeScript client against a running server', () => {
  let server: RunningLectern
  let lectern: Lectern

  beforeAll(async () => {
    server = await startLectern(GENEROUS_LIMITS)
    lectern = server.client()
    const db = server.ctx.database.db
    for (let n = 1; n <= 7; n++) {
      await buildForm(db, { id: `form_${n}`, title: `Form ${n}`, active: n % 2 === 1, createdAt: day(n) })
    }
    for (let n = 1; n <= 5; n++) {
      await buildSubmission(db, { formId: 'form_1', id: `submission_${n}`, createdAt: day(n), data: { n } })
    }
    await buildPage(db, { id: 'page_home', path: '/', published: true, createdAt: day(1) })
    await buildPage(db, { id: 'page_draft', path: '/draft', published: false, createdAt: day(2) })
    await buildRedirect(db, { id: 'redirect_on', fromPath: '/a', toPath: '/b', createdAt: day(1) })
    await buildRedirect(db, {
      id: 'redirect_off',
      fromPath: '/c',
      toPath: '/d',
      active: false,
      createdAt: day(2),
    })
  })
  afterAll(() => server.ctx.close())

  it('lists forms with typed items and the list meta', async () => {
    const { data, meta } = await lectern.forms.list()
    expectTypeOf(data).toEqualTypeOf<Form[]>()
    expect(data.map((form) => form.id)).toEqual([
      'form_1',
      'form_2',
      'form_3',
      'form_4',
      'form_5',
      'form_6',
      'form_7',
    ])
    expect(data[0]).toEqual({ id: 'form_1', title: 'Form 1', description: null })
    expect(meta).toEqual({ total: 7, page: 1, pageSize: 20, totalPages: 1 })
  })

  it('passes page, pageSize and the filter as query parameters', async () => {
    const { fetch, calls } = recordingFetch()
    const { data, meta } = await server.client({ fetch }).forms.list({ active: true, page: 2, pageSize: 2 })
    expect(calls.map((call) => new URL(call.url).search)).toEqual(['?active=true&page=2&pageSize=2'])
    expect(data.map((form) => form.id)).toEqual(['form_5', 'form_7'])
    expect(meta).toEqual({ total: 4, page: 2, pageSize: 2, totalPages: 2 })
    expect((await lectern.forms.list({ active: false })).data.map((form) => form.id)).toEqual([
      'form_2',
      'form_4',
      'form_6',
    ])
  })

  it("lists a form's submissions, newest first", async () => {
    const { data } = await lectern.forms.submissions('form_1', { pageSize: 2 })
    expectTypeOf(data).toEqualTypeOf<Submission[]>()
    expect(data.map((submission) => submission.id)).toEqual(['submission_5', 'submission_4'])
    expect(data[0]?.data).toEqual({ n: 5 })
  })

  it('sends Date filters as UTC with Z, text as given, and the flags as true or false', async () => {
    const { fetch, calls } = recordingFetch()
    const client = server.client({ fetch })
    const { data } = await client.forms.submissions('form_1', {
      since: new Date('2024-01-02T11:00:00+01:00'),
      until: new Date(Date.UTC(2024, 0, 4, 10, 0, 0, 250)),
      isRead: false,
    })
    // The fraction counts as the next whole second, so submission_4 (10:00:00) is inside.
    expect(data.map((submission) => submission.id)).toEqual(['submission_4', 'submission_3', 'submission_2'])
    const all = []
    for await (const one of client.forms.allSubmissions('form_1', { since: day(4), isStarred: false }))
      all.push(one.id)
    expect(all).toEqual(['submission_5', 'submission_4'])
    expect(calls.map((call) => decodeURIComponent(new URL(call.url).search))).toEqual([
      '?since=2024-01-02T10:00:00Z&until=2024-01-04T10:00:00.250Z&isRead=false',
      '?since=2024-01-04T10:00:00Z&isStarred=false&pageSize=100&page=1',
    ])
    expect(() => client.forms.submissions('form_1', { since: new Date('never') })).toThrow(TypeError)
  })

  it('syncs up to now cut to the whole second, then from there to a given until', async () => {
    // 10:00:00.900 on the 3rd: submission_3, created at 10:00:00, belongs to the next run.
    const sync = new Submissions(lectern.forms, () => Date.UTC(2024, 0, 3, 10, 0, 0, 900))
    const first = await sync.sync('form_1', { pageSize: 1 })
    expectTypeOf(first).toEqualTypeOf<SyncResult>()
    expect(first).toEqual({
      items: [
        expect.objectContaining({ id: 'submission_2' }),
        expect.objectContaining({ id: 'submission_1' }),
      ],
      until: '2024-01-03T10:00:00Z',
    })
    const second = await lectern.submissions.sync('form_1', { since: first.until, until: new Date(day(5)) })
    expect(second.items.map((submission) => submission.id)).toEqual(['submission_4', 'submission_3'])
    expect(second.until).toBe(day(5))
  })

  it('lists pages and redirects with their filters', async () => {
    const pages = await lectern.pages.list({ published: true })
    expectTypeOf(pages.data).toEqualTypeOf<Page[]>()
    expect(pages.data.map((page) => page.id)).toEqual(['page_home'])
    expect((await lectern.pages.list({ published: false })).data.map((page) => page.id)).toEqual([
      'page_draft',
    ])
    expect(
      (await lectern.redirects.list({ active: true })).data.map((r) => [r.fromPath, r.toPath, r.type]),
    ).toEqual([['/a', '/b', 'permanent']])
  })

  it('walks every page with an async iterator', async () => {
    const { fetch, calls } = recordingFetch()
    const client = server.client({ fetch })
    const ids: string[] = []
    for await (const form of client.forms.all({ active: true, pageSize: 1 })) ids.push(form.id)
    expect(ids).toEqual(['form_1', 'form_3', 'form_5', 'form_7'])
    expect(calls).toHaveLength(4)

    const submissions: string[] = []
    for await (const submission of client.forms.allSubmissions('form_1', { pageSize: 2 })) {
      submissions.push(submission.id)
    }
    expect(submissions).toEqual([
      'submission_5',
      'submission_4',
      'submission_3',
      'submission_2',
      'submission_1',
    ])

    const pages = []
    for await (const page of client.pages.all()) pages.push(page.id)
    expect(pages).toEqual(['page_home', 'page_draft'])
    const redirects = []
    for await (const redirect of client.redirects.all({ active: false })) redirects.push(redirect.id)
    expect(redirects).toEqual(['redirect_off'])
  })

  it('asks for the largest pages when walking a list, and stops after an empty one', async () => {
    const { fetch, calls } = recordingFetch()
    const all = []
    for await (const form of server.client({ fetch }).forms.all()) all.push(form)
    expect(all).toHaveLength(7)
    expect(calls.map((call) => new URL(call.url).search)).toEqual(['?pageSize=100&page=1'])
    for await (const _ of server.client({ fetch }).forms.allSubmissions('form_2')) expect.unreachable()
  })

  it('stops early when the loop breaks, without fetching further pages', async () => {
    const { fetch, calls } = recordingFetch()
    for await (const form of server.client({ fetch }).forms.all({ pageSize: 2 })) {
      expect(form.id).toBe('form_1')
      break
    }
    expect(calls).toHaveLength(1)
  })

  it('tracks the rate-limit state of the last response', async () => {
    const client = server.client()
    expect(client.rateLimit).toBeNull()
    await client.forms.list()
    const first = client.rateLimit
    expect(first).toEqual({
      limit: GENEROUS_LIMITS.perHour,
      remaining: expect.any(Number),
      reset: expect.any(Number),
    })
    expect(first?.reset).toBeGreaterThan(Date.now() / 1000)
    await client.pages.list()
    expect(client.rateLimit?.remaining).toBe((first?.remaining ?? 0) - 1)
  })

  it('throws a NotFoundError naming an unknown form', async () => {
    const error = await lectern.forms.submissions('form_nowhere').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error).toBeInstanceOf(LecternError)
    expect(error).toMatchObject({
      status: 404,
      type: 'resource_not_found',
      message: expect.stringContaining('form_nowhere'),
    })
    expect((error as NotFoundError).requestId).toEqual(expect.any(String))
  })

  it('encodes the form id into the path', async () => {
    const error = await lectern.forms.submissions('form/../x?y').catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 404, type: 'resource_not_found' })
  })

  it('throws an InvalidRequestError for parameters the server refuses', async () => {
    const error = await lectern.forms.list({ pageSize: 500 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidRequestError)
    expect(error).toMatchObject({
      status: 400,
      type: 'invalid_parameters',
      message: expect.stringMatching(/page size/i),
    })
  })

  it('throws an AuthenticationError, with the type, for a bad, revoked or inactive key', async () => {
    const db = server.ctx.database.db
    const revoked = await buildApiKey(db, { revoked: true })
    const inactive = await buildApiKey(db, { active: false })
    for (const [apiKey, type] of [
      ['lk_live_unknown', 'invalid_api_key'],
      [revoked.plainKey, 'invalid_api_key'],
      [inactive.plainKey, 'api_key_inactive'],
      ['two words', 'invalid_authorization_format'],
    ] as const) {
      const error = await new Lectern({ baseUrl: server.baseUrl, apiKey }).forms
        .list()
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(AuthenticationError)
      expect(error).toMatchObject({ status: 401, type })
    }
  })

  it("throws a PermissionError when the key's role lacks the permission", async () => {
    const viewer = await buildApiKey(server.ctx.database.db, { role: 'viewer' })
    const client = server.client({ apiKey: viewer.plainKey })
    const error = await client.forms.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PermissionError)
    expect(error).toMatchObject({ status: 403, type: 'insufficient_permissions' })
    expect((await client.pages.list()).meta.total).toBe(2)
  })

  it('narrows the error type by class', async () => {
    const error = await lectern.forms.submissions('form_nowhere').catch((e: unknown) => e)
    if (error instanceof AuthenticationError)
      expectTypeOf(error.type).toEqualTypeOf<
        | 'missing_authorization_header'
        | 'invalid_authorization_format'
        | 'invalid_api_key'
        | 'api_key_inactive'
      >()
    if (error instanceof NotFoundError) expectTypeOf(error.type).toEqualTypeOf<'resource_not_found'>()
    expect(error).toBeInstanceOf(NotFoundError)
  })

  it('refuses to start without a base URL or a key', () => {
    expect(() => new Lectern({ baseUrl: '', apiKey: 'k' })).toThrow(/baseUrl/)
    expect(() => new Lectern({ baseUrl: server.baseUrl, apiKey: '' })).toThrow(/apiKey/)
  })

  it('accepts a base URL with a trailing slash', async () => {
    const { meta } = await server.client({ baseUrl: `${server.baseUrl}/` }).redirects.list()
    expect(meta.total).toBe(2)
  })
})

describe('the TypeScript client against a server with phrase-form errors', () => {
  let server: RunningLectern

  beforeAll(async () => {
    server = await startLectern({ ...GENEROUS_LIMITS, errorStyle: 'phrase' })
  })
  afterAll(() => server.ctx.close())

  it('reports the error type in code form whatever the server style', async () => {
    const error = await server
      .client({ apiKey: 'lk_live_unknown' })
      .forms.list()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AuthenticationError)
    expect(error).toMatchObject({ status: 401, type: 'invalid_api_key' })
    const missing = await server
      .client()
      .forms.submissions('form_nowhere')
      .catch((e: unknown) => e)
    expect(missing).toMatchObject({ status: 404, type: 'resource_not_found' })
  })
})

describe('all() against a server whose every page announces one more', () => {
  it("stops once the first page's total is reached", async () => {
    const server = await startMisbehaving(
      listOf((n) => ({ id: `form_${n}`, title: `Form ${n}`, description: null })),
    )
    try {
      const client = new Lectern({ baseUrl: server.baseUrl, apiKey: 'lk_live_x' })
      const ids: string[] = []
      for await (const form of client.forms.all({ pageSize: 2 })) {
        ids.push(form.id)
        if (ids.length > 50) break
      }
      expect(ids).toEqual(['form_0', 'form_1', 'form_2', 'form_3'])
      expect(server.requests).toHaveLength(2)
    } finally {
      await server.close()
    }
  })
})
