import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildPage } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request, TIMESTAMP } from '../security-suite.js'

const PAGE_FIELDS = [
  'id',
  'title',
  'slug',
  'path',
  'pageType',
  'isPublished',
  'publishedAt',
  'createdAt',
  'updatedAt',
]

describe('GET /api/v1/page-builder', () => {
  let ctx: TestContext
  let auth: string
  const list = (query = '') => request(ctx.app, `/api/v1/page-builder${query}`, auth)

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    auth = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  describe('with no pages', () => {
    it('answers 200 with an empty list, total 0 and totalPages 0', async () => {
      expect(expectList(await list())).toEqual({
        data: [],
        meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 },
      })
    })
  })

  describe('with pages', () => {
    beforeAll(async () => {
      const db = ctx.database.db
      await buildPage(db, { id: 'page_late', path: '/late', createdAt: '2024-03-01T00:00:00Z' })
      await buildPage(db, {
        id: 'page_tie_c',
        path: '/tie/c',
        createdAt: '2024-02-01T12:00:00Z',
        published: false,
      })
      await buildPage(db, { id: 'page_tie_a', path: '/tie/a', createdAt: '2024-02-01T12:00:00Z' })
      await buildPage(db, {
        id: 'page_early',
        title: 'Home',
        path: '/',
        pageType: 'landing',
        createdAt: '2024-01-05T10:00:00Z',
      })
      await buildPage(db, {
        id: 'page_tie_b',
        path: '/tie/b',
        createdAt: '2024-02-01T12:00:00Z',
        published: false,
      })
    })

    it('shows each page with exactly the SPEC fields, in order', async () => {
      const { data } = expectList(await list())
      expect(data.length).toBe(5)
      for (const page of data) expect(Object.keys(page)).toEqual(PAGE_FIELDS)
    })

    it('shows a published page with its values and types', async () => {
      const { data } = expectList(await list())
      expect(data.find((p) => p.id === 'page_early')).toEqual({
        id: 'page_early',
        title: 'Home',
        slug: 'home',
        path: '/',
        pageType: 'landing',
        isPublished: true,
        publishedAt: '2024-01-05T10:00:00Z',
        createdAt: '2024-01-05T10:00:00Z',
        updatedAt: '2024-01-05T10:00:00Z',
      })
    })

    it('shows an unpublished page with isPublished false and publishedAt null', async () => {
      const { data } = expectList(await list())
      expect(data.find((p) => p.id === 'page_tie_b')).toMatchObject({
        isPublished: false,
        publishedAt: null,
        pageType: 'page',
        path: '/tie/b',
      })
    })

    it('gives every field its SPEC type and format', async () => {
      const { data } = expectList(await list())
      for (const page of data) {
        for (const field of ['id', 'title', 'slug', 'path', 'pageType'])
          expect(typeof page[field]).toBe('string')
        expect(page.path).toMatch(/^\//)
        expect(typeof page.isPublished).toBe('boolean')
        if (page.publishedAt !== null) expect(page.publishedAt).toMatch(TIMESTAMP)
        expect(page.createdAt).toMatch(TIMESTAMP)
        expect(page.updatedAt).toMatch(TIMESTAMP)
      }
    })

    it('orders pages by createdAt ascending, breaking ties by id ascending', async () => {
      const { data } = expectList(await list())
      expect(data.map((p) => p.id)).toEqual([
        'page_early',
        'page_tie_a',
        'page_tie_b',
        'page_tie_c',
        'page_late',
      ])
    })

    it('keeps that order across pages of results', async () => {
      const ids: unknown[] = []
      for (let page = 1; page <= 3; page++) {
        const { data, meta } = expectList(await list(`?pageSize=2&page=${page}`))
        expect(meta).toEqual({ total: 5, page, pageSize: 2, totalPages: 3 })
        ids.push(...data.map((p) => p.id))
      }
      expect(ids).toEqual(['page_early', 'page_tie_a', 'page_tie_b', 'page_tie_c', 'page_late'])
    })

    it('lists only published pages with published=true', async () => {
      const { data, meta } = expectList(await list('?published=true'))
      expect(data.map((p) => p.id)).toEqual(['page_early', 'page_tie_a', 'page_late'])
      expect(data.every((p) => p.isPublished === true)).toBe(true)
      expect(meta.total).toBe(3)
    })

    it('lists only unpublished pages with published=false', async () => {
      const { data, meta } = expectList(await list('?published=false'))
      expect(data.map((p) => p.id)).toEqual(['page_tie_b', 'page_tie_c'])
      expect(data.every((p) => p.isPublished === false)).toBe(true)
      expect(meta).toEqual({ total: 2, page: 1, pageSize: 20, totalPages: 1 })
    })

    it.each(['TRUE', 'False', '1', '0', 'yes', '', 'false ', 'published'])(
      "refuses published=%j with 400 invalid_parameters naming 'published'",
      async (value) => {
        const body = expectError(
          await list(`?published=${encodeURIComponent(value)}`),
          400,
          'invalid_parameters',
        )
        expect(body.message).toContain('published')
      },
    )

    it('ignores the active filter, which pages do not know', async () => {
      expect(expectList(await list('?active=maybe')).meta.total).toBe(5)
    })
  })
})
