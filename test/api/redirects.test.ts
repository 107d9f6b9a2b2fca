import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildRedirect } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request, TIMESTAMP } from '../security-suite.js'

const REDIRECT_FIELDS = ['id', 'fromPath', 'toPath', 'type', 'isActive', 'createdAt', 'updatedAt']

describe('GET /api/v1/page-builder/redirects', () => {
  let ctx: TestContext
  let auth: string
  const list = (query = '') => request(ctx.app, `/api/v1/page-builder/redirects${query}`, auth)

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    auth = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  describe('with no redirects', () => {
    it('answers 200 with an empty list, total 0 and totalPages 0', async () => {
      expect(expectList(await list())).toEqual({
        data: [],
        meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 },
      })
    })
  })

  describe('with redirects', () => {
    beforeAll(async () => {
      const db = ctx.database.db
      await buildRedirect(db, { id: 'redirect_late', fromPath: '/late', createdAt: '2024-03-01T00:00:00Z' })
      await buildRedirect(db, {
        id: 'redirect_tie_c',
        fromPath: '/tie/c',
        createdAt: '2024-02-01T12:00:00Z',
        active: false,
      })
      await buildRedirect(db, {
        id: 'redirect_tie_a',
        fromPath: '/tie/a',
        type: 'temporary',
        createdAt: '2024-02-01T12:00:00Z',
      })
      await buildRedirect(db, {
        id: 'redirect_early',
        fromPath: '/old-about',
        toPath: '/about',
        type: 'permanent',
        createdAt: '2024-01-05T10:00:00Z',
      })
      await buildRedirect(db, {
        id: 'redirect_tie_b',
        fromPath: '/tie/b',
        createdAt: '2024-02-01T12:00:00Z',
        active: false,
      })
    })

    it('shows each redirect with exactly the SPEC fields, in order', async () => {
      const { data } = expectList(await list())
      expect(data.length).toBe(5)
      for (const redirect of data) expect(Object.keys(redirect)).toEqual(REDIRECT_FIELDS)
    })

    it('shows a redirect with its values and types', async () => {
      const { data } = expectList(await list())
      expect(data.find((r) => r.id === 'redirect_early')).toEqual({
        id: 'redirect_early',
        fromPath: '/old-about',
        toPath: '/about',
        type: 'permanent',
        isActive: true,
        createdAt: '2024-01-05T10:00:00Z',
        updatedAt: '2024-01-05T10:00:00Z',
      })
      expect(data.find((r) => r.id === 'redirect_tie_a')).toMatchObject({ type: 'temporary', isActive: true })
      expect(data.find((r) => r.id === 'redirect_tie_b')).toMatchObject({ isActive: false })
    })

    it('gives every field its SPEC type and format', async () => {
      const { data } = expectList(await list())
      for (const redirect of data) {
        expect(typeof redirect.id).toBe('string')
        expect(redirect.fromPath).toMatch(/^\//)
        expect(redirect.toPath).toMatch(/^\//)
        expect(['permanent', 'temporary']).toContain(redirect.type)
        expect(typeof redirect.isActive).toBe('boolean')
        expect(redirect.createdAt).toMatch(TIMESTAMP)
        expect(redirect.updatedAt).toMatch(TIMESTAMP)
      }
    })

    it('orders redirects by createdAt ascending, breaking ties by id ascending', async () => {
      const { data } = expectList(await list())
      expect(data.map((r) => r.id)).toEqual([
        'redirect_early',
        'redirect_tie_a',
        'redirect_tie_b',
        'redirect_tie_c',
        'redirect_late',
      ])
    })

    it('keeps that order across pages', async () => {
      const ids: unknown[] = []
      for (let page = 1; page <= 3; page++) {
        const { data, meta } = expectList(await list(`?pageSize=2&page=${page}`))
        expect(meta).toEqual({ total: 5, page, pageSize: 2, totalPages: 3 })
        ids.push(...data.map((r) => r.id))
      }
      expect(ids).toEqual([
        'redirect_early',
        'redirect_tie_a',
        'redirect_tie_b',
        'redirect_tie_c',
        'redirect_late',
      ])
    })

    it('lists only active redirects with active=true', async () => {
      const { data, meta } = expectList(await list('?active=true'))
      expect(data.map((r) => r.id)).toEqual(['redirect_early', 'redirect_tie_a', 'redirect_late'])
      expect(data.every((r) => r.isActive === true)).toBe(true)
      expect(meta.total).toBe(3)
    })

    it('lists only inactive redirects with active=false', async () => {
      const { data, meta } = expectList(await list('?active=false'))
      expect(data.map((r) => r.id)).toEqual(['redirect_tie_b', 'redirect_tie_c'])
      expect(data.every((r) => r.isActive === false)).toBe(true)
      expect(meta).toEqual({ total: 2, page: 1, pageSize: 20, totalPages: 1 })
    })

    it.each(['TRUE', 'False', '1', '0', 'yes', '', ' true', 'null'])(
      "refuses active=%j with 400 invalid_parameters naming 'active'",
      async (value) => {
        const body = expectError(
          await list(`?active=${encodeURIComponent(value)}`),
          400,
          'invalid_parameters',
        )
        expect(body.message).toContain('active')
      },
    )

    it('ignores the published filter, which redirects do not know', async () => {
      expect(expectList(await list('?published=maybe')).meta.total).toBe(5)
    })
  })
})
