import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request } from '../security-suite.js'

const FORM_FIELDS = ['id', 'title', 'description']

describe('GET /api/v1/forms', () => {
  let ctx: TestContext
  let auth: string
  const list = (query = '') => request(ctx.app, `/api/v1/forms${query}`, auth)

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    auth = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  describe('with no forms', () => {
    it('answers 200 with an empty list, total 0 and totalPages 0', async () => {
      const body = expectList(await list())
      expect(body).toEqual({ data: [], meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 } })
    })
  })

  describe('with forms', () => {
    beforeAll(async () => {
      const db = ctx.database.db
      // Inserted out of order; three share a createdAt so that only the id can order them.
      await buildForm(db, { id: 'form_late', title: 'Late', createdAt: '2024-03-01T00:00:00Z' })
      await buildForm(db, {
        id: 'form_tie_c',
        title: 'Tie C',
        description: 'third of the tie',
        createdAt: '2024-02-01T12:00:00Z',
      })
      await buildForm(db, { id: 'form_tie_a', title: 'Tie A', createdAt: '2024-02-01T12:00:00Z' })
      await buildForm(db, {
        id: 'form_early',
        title: 'Early',
        description: 'the first form',
        createdAt: '2024-01-05T10:00:00Z',
        active: false,
      })
      await buildForm(db, {
        id: 'form_tie_b',
        title: 'Tie B',
        createdAt: '2024-02-01T12:00:00Z',
        active: false,
      })
    })

    it('shows each form with exactly id, title and description, in that order', async () => {
      const { data } = expectList(await list())
      expect(data.length).toBe(5)
      for (const form of data) expect(Object.keys(form)).toEqual(FORM_FIELDS)
    })

    it('gives each field its SPEC type, with null for a missing description', async () => {
      const { data } = expectList(await list())
      expect(data.find((f) => f.id === 'form_early')).toEqual({
        id: 'form_early',
        title: 'Early',
        description: 'the first form',
      })
      expect(data.find((f) => f.id === 'form_tie_a')).toEqual({
        id: 'form_tie_a',
        title: 'Tie A',
        description: null,
      })
    })

    it('never shows the hidden isActive flag or the timestamps', async () => {
      const res = await list()
      expect(res.body).not.toMatch(/isActive|is_active|createdAt|created_at|updatedAt|updated_at/)
    })

    it('orders forms by createdAt ascending, breaking ties by id ascending', async () => {
      const { data } = expectList(await list())
      expect(data.map((f) => f.id)).toEqual([
        'form_early',
        'form_tie_a',
        'form_tie_b',
        'form_tie_c',
        'form_late',
      ])
    })

    it('keeps that order across pages, with no form repeated or skipped', async () => {
      const ids: unknown[] = []
      for (let page = 1; page <= 3; page++) {
        const { data, meta } = expectList(await list(`?pageSize=2&page=${page}`))
        expect(meta).toEqual({ total: 5, page, pageSize: 2, totalPages: 3 })
        ids.push(...data.map((f) => f.id))
      }
      expect(ids).toEqual(['form_early', 'form_tie_a', 'form_tie_b', 'form_tie_c', 'form_late'])
    })

    it('lists only active forms with active=true', async () => {
      const { data, meta } = expectList(await list('?active=true'))
      expect(data.map((f) => f.id)).toEqual(['form_tie_a', 'form_tie_c', 'form_late'])
      expect(meta.total).toBe(3)
    })

    it('lists only inactive forms with active=false', async () => {
      const { data, meta } = expectList(await list('?active=false'))
      expect(data.map((f) => f.id)).toEqual(['form_early', 'form_tie_b'])
      expect(meta).toEqual({ total: 2, page: 1, pageSize: 20, totalPages: 1 })
    })

    it.each(['TRUE', 'False', '1', '0', 'yes', '', 'true ', 'on'])(
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

    it('ignores the published filter, which forms do not know', async () => {
      const { meta } = expectList(await list('?published=yes'))
      expect(meta.total).toBe(5)
    })
  })
})
