import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm, buildPage, buildRedirect, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request } from '../security-suite.js'

const TOTAL = 105
const FORM_ID = 'form_paging'

/** A canonical timestamp `i` seconds after a fixed start, so every item has its own createdAt. */
const at = (i: number) => new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString().replace('.000Z', 'Z')

const endpoints = [
  { path: '/api/v1/forms', filter: 'active' },
  { path: `/api/v1/forms/${FORM_ID}/submissions`, filter: undefined },
  { path: '/api/v1/page-builder', filter: 'published' },
  { path: '/api/v1/page-builder/redirects', filter: 'active' },
] as const

describe('query parameters of the list endpoints', () => {
  let ctx: TestContext
  let auth: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    const db = ctx.database.db
    auth = (await buildApiKey(db)).authorization
    // The paging form is created last so that forms, too, number exactly TOTAL.
    for (let i = 1; i < TOTAL; i++) await buildForm(db, { createdAt: at(i) })
    await buildForm(db, { id: FORM_ID, createdAt: at(TOTAL) })
    for (let i = 0; i < TOTAL; i++) {
      await buildSubmission(db, { formId: FORM_ID, createdAt: at(i) })
      await buildPage(db, { path: `/p/${i}`, createdAt: at(i) })
      await buildRedirect(db, { fromPath: `/r/${i}`, createdAt: at(i) })
    }
  })
  afterAll(() => ctx.close())

  describe.each(endpoints)('on $path', ({ path, filter }) => {
    const list = (query: string) => request(ctx.app, `${path}${query}`, auth)

    it('defaults to page 1 and 20 items per page', async () => {
      const { data, meta } = expectList(await list(''))
      expect(data.length).toBe(20)
      expect(meta).toEqual({ total: TOTAL, page: 1, pageSize: 20, totalPages: 6 })
    })

    it('serves the requested page', async () => {
      const first = expectList(await list('?pageSize=10'))
      const second = expectList(await list('?page=2&pageSize=10'))
      expect(second.meta).toEqual({ total: TOTAL, page: 2, pageSize: 10, totalPages: 11 })
      expect(second.data.length).toBe(10)
      const firstIds = new Set(first.data.map((item) => item.id))
      expect(second.data.some((item) => firstIds.has(item.id))).toBe(false)
    })

    it('rounds totalPages up', async () => {
      const { meta } = expectList(await list('?pageSize=8'))
      expect(meta.totalPages).toBe(14)
    })

    it('serves a short last page', async () => {
      const { data, meta } = expectList(await list('?page=6'))
      expect(data.length).toBe(5)
      expect(meta).toEqual({ total: TOTAL, page: 6, pageSize: 20, totalPages: 6 })
    })

    it('accepts pageSize=100 and pageSize=1', async () => {
      const hundred = expectList(await list('?pageSize=100'))
      expect(hundred.data.length).toBe(100)
      expect(hundred.meta).toEqual({ total: TOTAL, page: 1, pageSize: 100, totalPages: 2 })
      const one = expectList(await list('?pageSize=1&page=105'))
      expect(one.data.length).toBe(1)
      expect(one.meta).toEqual({ total: TOTAL, page: 105, pageSize: 1, totalPages: 105 })
    })

    it.each(['7', '1000', '9007199254740991'])(
      'answers a page past the end (%s) with 200 and no data',
      async (page) => {
        const { data, meta } = expectList(await list(`?page=${page}`))
        expect(data).toEqual([])
        expect(meta).toEqual({ total: TOTAL, page: Number(page), pageSize: 20, totalPages: 6 })
      },
    )

    it.each([
      '0',
      '101',
      '-1',
      'abc',
      '1.5',
      '1e1',
      ' 1',
      '1 ',
      '',
      '+5',
      '0x10',
      '１０',
      '100000000000000000000',
    ])('refuses pageSize=%j with 400 saying it must be between 1 and 100', async (value) => {
      const body = expectError(
        await list(`?pageSize=${encodeURIComponent(value)}`),
        400,
        'invalid_parameters',
      )
      expect(body.message).toContain('between 1 and 100')
    })

    it('refuses a bare pageSize with no value', async () => {
      const body = expectError(await list('?pageSize'), 400, 'invalid_parameters')
      expect(body.message).toContain('between 1 and 100')
    })

    it.each(['0', '-1', 'abc', '1.5', '1e1', ' 1', '', '2.0', '-0', 'Infinity'])(
      "refuses page=%j with 400 naming 'page'",
      async (value) => {
        const body = expectError(await list(`?page=${encodeURIComponent(value)}`), 400, 'invalid_parameters')
        expect(body.message).toContain('page')
      },
    )

    it.each([
      ['page', '?page=1&page=2'],
      ['page, even with the same value', '?page=1&page=1'],
      ['pageSize', '?pageSize=10&pageSize=20'],
      ...(filter ? [[filter, `?${filter}=true&${filter}=false`]] : []),
    ])('refuses a repeated %s with 400 invalid_parameters', async (_, query) => {
      expectError(await list(query), 400, 'invalid_parameters')
    })

    it('ignores parameters it does not know, even repeated or odd ones', async () => {
      const { meta } = expectList(await list('?foo=bar&foo=baz&sort=-id&limit=abc&offset=-1&page_size=0'))
      expect(meta).toEqual({ total: TOTAL, page: 1, pageSize: 20, totalPages: 6 })
    })
  })
})
