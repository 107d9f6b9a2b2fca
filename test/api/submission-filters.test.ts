import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatTimestamp } from '../../src/time.js'
import { buildApiKey, buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request } from '../security-suite.js'

const FORM = 'form_filtered000000000000'
const START = Date.UTC(2024, 0, 1)
const at = (second: number) => formatTimestamp(new Date(START + second * 1000))

interface Row {
  id: string
  createdAt: string
  isRead: boolean
  isStarred: boolean
}

/** A deterministic spread: 150 submissions over 100 seconds (some sharing a second), flags mixed. */
const ROWS: Row[] = Array.from({ length: 150 }, (_, i) => ({
  id: `submission_filtered${String(i).padStart(6, '0')}`,
  createdAt: at((i * 7) % 100),
  isRead: i % 3 === 0,
  isStarred: i % 5 < 2,
}))

/** What the API must list for these filters: newest first, ties by id descending. */
function expected(filters: { since?: string; until?: string; isRead?: boolean; isStarred?: boolean }) {
  return ROWS.filter(
    (row) =>
      (filters.since === undefined || row.createdAt >= filters.since) &&
      (filters.until === undefined || row.createdAt < filters.until) &&
      (filters.isRead === undefined || row.isRead === filters.isRead) &&
      (filters.isStarred === undefined || row.isStarred === filters.isStarred),
  )
    .sort((a, b) =>
      a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt),
    )
    .map((row) => row.id)
}

describe('filters of GET /api/v1/forms/{id}/submissions', () => {
  let ctx: TestContext
  let auth: string
  const list = (query: string, formId = FORM) =>
    request(ctx.app, `/api/v1/forms/${formId}/submissions?${query}`, auth)
  /** Every page of a filtered list, and the totals each page reported. */
  const everyPage = async (query: string, pageSize: number) => {
    const ids: string[] = []
    const totals = new Set<number>()
    for (let page = 1; ; page++) {
      const body = expectList<{ id: string }>(await list(`${query}&pageSize=${pageSize}&page=${page}`))
      totals.add(body.meta.total)
      ids.push(...body.data.map((item) => item.id))
      if (page >= body.meta.totalPages) break
    }
    return { ids, totals: [...totals] }
  }

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    const db = ctx.database.db
    auth = (await buildApiKey(db)).authorization
    await buildForm(db, { id: FORM })
    await buildForm(db, { id: 'form_filteredOther0000000' })
    for (const row of ROWS) await buildSubmission(db, { formId: FORM, ...row })
    await buildSubmission(db, { formId: 'form_filteredOther0000000', createdAt: at(50) })
  })
  afterAll(() => ctx.close())

  it('includes a submission created exactly at since and excludes one created exactly at until', async () => {
    const body = expectList<Row>(await list(`since=${at(14)}&until=${at(21)}&pageSize=100`))
    expect(body.data.map((row) => row.id)).toEqual(expected({ since: at(14), until: at(21) }))
    expect(body.data.some((row) => row.createdAt === at(14))).toBe(true)
    expect(body.data.some((row) => row.createdAt === at(21))).toBe(false)
    expect(ROWS.some((row) => row.createdAt === at(21))).toBe(true)
  })

  it.each([
    ['an offset', '2024-01-01T01:00:14+01:00', at(14)],
    ['no offset, read as UTC', '2024-01-01T00:00:14', at(14)],
    ['a fraction of a second, rounded up to the next stored second', '2024-01-01T00:00:13.200Z', at(14)],
    ['lower-case z', '2024-01-01T00:00:14z', at(14)],
  ])('reads a time with %s', async (_, since, same) => {
    const given = expectList<Row>(
      await list(`since=${encodeURIComponent(since)}&until=${at(40)}&pageSize=100`),
    )
    expect(given.data.map((row) => row.id)).toEqual(expected({ since: same, until: at(40) }))
    expect(given.meta.total).toBe(expected({ since: same, until: at(40) }).length)
  })

  it("reads an offset whose '+' was sent unencoded, which arrives as a space", async () => {
    const given = expectList<Row>(await list(`since=2024-01-01T01:00:14+01:00&until=${at(40)}&pageSize=100`))
    expect(given.data.map((row) => row.id)).toEqual(expected({ since: at(14), until: at(40) }))
  })

  it('lists and counts every combination of filters exactly, page after page', async () => {
    const windows = [{}, { since: at(10) }, { until: at(77) }, { since: at(23), until: at(61) }]
    for (const window of windows) {
      for (const isRead of [undefined, true, false]) {
        for (const isStarred of [undefined, true, false]) {
          const filters = { ...window, isRead, isStarred }
          const query = Object.entries(filters)
            .filter(([, value]) => value !== undefined)
            .map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`)
            .join('&')
          const want = expected(filters)
          // 7 per page walks past the pager's remembered positions (every 20th row) too.
          const { ids, totals } = await everyPage(query, 7)
          expect({ query, ids, totals }).toEqual({ query, ids: want, totals: [want.length] })
        }
      }
    }
  })

  it('counts as COUNT(*) does for the same filters', async () => {
    const body = expectList(await list(`since=${at(5)}&until=${at(95)}&isRead=false&isStarred=true`))
    const [row] = (
      await sql<{ n: number | string }>`select count(*) as n from submissions where form_id = ${FORM}
        and created_at >= ${at(5)} and created_at < ${at(95)} and is_read = 0 and is_starred = 1`.execute(
        ctx.database.db,
      )
    ).rows
    expect(body.meta.total).toBe(Number(row?.n))
    expect(body.meta.total).toBeGreaterThan(0)
  })

  it("takes an unfiltered total from the form's own counter, and a filtered one by counting", async () => {
    // A counter knocked off by hand, at the same version: only a list that reads it shows it.
    await ctx.database.db
      .updateTable('form_submission_counts')
      .set({ total: 999 })
      .where('form_id', '=', FORM)
      .execute()
    try {
      expect(expectList(await list('pageSize=3')).meta.total).toBe(999)
      expect(expectList(await list(`pageSize=3&since=${at(0)}`)).meta.total).toBe(ROWS.length)
    } finally {
      await ctx.database.db
        .updateTable('form_submission_counts')
        .set({ total: ROWS.length })
        .where('form_id', '=', FORM)
        .execute()
    }
  })

  it('counts again once a submission is added or changed', async () => {
    const query = `since=${at(90)}&isStarred=true&pageSize=4`
    const before = expectList(await list(query)).meta.total
    const added = await buildSubmission(ctx.database.db, { formId: FORM, createdAt: at(99), isStarred: true })
    expect(expectList(await list(query)).meta.total).toBe(before + 1)
    await ctx.database.db
      .updateTable('submissions')
      .set({ is_starred: 0 })
      .where('id', '=', added.id)
      .execute()
    expect(expectList(await list(query)).meta.total).toBe(before)
    await ctx.database.db.deleteFrom('submissions').where('id', '=', added.id).execute()
  })

  it('answers an empty window with an empty list', async () => {
    const body = expectList(await list(`since=${at(50)}&until=${at(50)}`))
    expect(body).toEqual({ data: [], meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 } })
  })

  it.each([
    ['since=yesterday', 'since'],
    ['since=2024-01-01', 'since'],
    ['since=2024-13-01T00:00:00Z', 'since'],
    ['until=2024-01-01T25:00:00Z', 'until'],
    ['since=2024-01-01T00:00:00%2B25:00', 'since'],
    ['until=2024-01-01T00:00:00-01:60', 'until'],
    ['since=2024-01-01T00:00:00%5BEurope/Paris%5D', 'since'],
    ['since=2024-01-01T00:00:00 25:00', 'since'],
    ['until=', 'until'],
    [`until=${'9'.repeat(200)}`, 'until'],
    ['since=2024-01-01T00:00:00Z&since=2024-01-02T00:00:00Z', 'since'],
    ['isRead=yes', 'isRead'],
    ['isRead=1', 'isRead'],
    ['isStarred=TRUE', 'isStarred'],
    ['isStarred=true&isStarred=false', 'isStarred'],
  ])('refuses %s with 400 invalid_parameters naming the parameter', async (query, name) => {
    const body = expectError(await list(query), 400, 'invalid_parameters')
    expect(body.message).toContain(`'${name}'`)
  })

  it('names every bad parameter in one answer, with those of paging', async () => {
    const body = expectError(
      await list('since=x&isRead=x&isStarred=x&until=x&pageSize=0'),
      400,
      'invalid_parameters',
    )
    for (const name of ['since', 'until', 'isRead', 'isStarred', 'pageSize'])
      expect(body.message).toContain(`'${name}'`)
  })

  it('checks the filters before the form exists, and answers 404 for an unknown form with good filters', async () => {
    expectError(await list('isRead=maybe', 'form_doesNotExist0000000'), 400, 'invalid_parameters')
    const body = expectError(await list('isRead=true', 'form_doesNotExist0000000'), 404, 'resource_not_found')
    expect(body.message).toContain('form_doesNotExist0000000')
  })
})

describe('a sync job reading windows while submissions arrive', () => {
  let ctx: TestContext
  let auth: string
  const FORM_ID = 'form_syncedWhileWritten00'

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    auth = (await buildApiKey(ctx.database.db, { scopes: ['submissions:read'], forms: [FORM_ID] }))
      .authorization
    await buildForm(ctx.database.db, { id: FORM_ID })
    for (let i = 0; i < 30; i++)
      await buildSubmission(ctx.database.db, {
        formId: FORM_ID,
        createdAt: formatTimestamp(new Date(Date.now() - 60_000 + i)),
      })
  })
  afterAll(() => ctx.close())

  /** One run: every page of `since`–`until`, newest first, 3 at a time; `writing`: a submission arrives between pages. */
  const run = async (since: string, until: string, writing: boolean) => {
    const ids: string[] = []
    for (let page = 1; ; page++) {
      const body = expectList<{ id: string }>(
        await request(
          ctx.app,
          `/api/v1/forms/${FORM_ID}/submissions?since=${since}&until=${until}&pageSize=3&page=${page}`,
          auth,
        ),
      )
      ids.push(...body.data.map((item) => item.id))
      if (page >= body.meta.totalPages) break
      if (writing) await buildSubmission(ctx.database.db, { formId: FORM_ID })
    }
    return ids
  }

  it('delivers each submission exactly once across runs', async () => {
    const delivered: string[] = []
    let since = '2000-01-01T00:00:00Z'
    let writing = true
    const writer = (async () => {
      while (writing) {
        await buildSubmission(ctx.database.db, { formId: FORM_ID })
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    })()
    try {
      for (let i = 0; i < 4; i++) {
        // `until` a moment in the past: what is still being written belongs to the next run.
        const until = formatTimestamp(new Date(Date.now() - 2000))
        delivered.push(...(await run(since, until, true)))
        since = until
        await new Promise((resolve) => setTimeout(resolve, 1100))
      }
    } finally {
      writing = false
      await writer
    }
    // The last run, after the writes: its window reaches past every submission.
    delivered.push(...(await run(since, formatTimestamp(new Date(Date.now() + 5000)), false)))
    const stored = (
      await ctx.database.db.selectFrom('submissions').select('id').where('form_id', '=', FORM_ID).execute()
    ).map((row) => row.id)
    expect(stored.length).toBeGreaterThan(30)
    expect([...delivered].sort()).toEqual([...stored].sort())
  })
})
