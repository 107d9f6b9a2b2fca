import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildForm, buildSubmission } from '../../../test/factories.js'
import { createTestContext, type TestContext } from '../../../test/harness.js'
import type { DatabaseHandle } from '../database.js'
import type { PreparedQuery } from '../prepared.js'
import { pagerQueries } from './content.js'
import { KeysetPager, type PagerQueries } from './paging.js'

/** A prepared query that counts how often it runs; the query itself runs on the real database. */
function counted<Row>(query: PreparedQuery<Row>) {
  const runs = { count: 0 }
  const wrapped: PreparedQuery<Row> = (values) => {
    runs.count += 1
    return query(values)
  }
  return { query: wrapped, runs }
}

/** One form's submissions, newest first, as the API pages them, with its count and scan counted. */
function submissionQueries(handle: DatabaseHandle) {
  const real = pagerQueries<{ json: string | null }>(handle, 'submissions', 'form_id', 'desc', 'joined json')
  const count = counted(real.count)
  const boundaries = counted(real.boundaries)
  const queries: PagerQueries<{ json: string | null }> = {
    ...real,
    count: count.query,
    boundaries: boundaries.query,
  }
  return { queries, counts: count.runs, scans: boundaries.runs }
}

/** The ids of a page, in order, from the JSON of its items. */
const idsOf = (rows: { json: string | null }[]) =>
  (
    JSON.parse(
      `[${rows
        .map((row) => row.json ?? '')
        .filter(Boolean)
        .join(',')}]`,
    ) as { id: string }[]
  ).map((item) => item.id)

describe('the keyset pager', () => {
  let context: TestContext
  let handle: DatabaseHandle
  let formId: string
  const ids: string[] = []

  beforeAll(async () => {
    context = await createTestContext()
    handle = context.database
    formId = (await buildForm(handle.db)).id
    for (let i = 0; i < 95; i++) {
      const createdAt = new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString().replace('.000Z', 'Z')
      ids.push((await buildSubmission(handle.db, { formId, createdAt })).id)
    }
    ids.reverse()
  })

  afterAll(() => context.close())

  it('counts a list once for all the requests that miss its total at a new version together', async () => {
    const { queries, counts } = submissionQueries(handle)
    const pager = new KeysetPager(queries)
    const totals = await Promise.all(
      Array.from({ length: 10 }, () => pager.total('form', { value: formId }, 1)),
    )
    expect(totals).toEqual(Array(10).fill(95))
    expect(counts.count).toBe(1)

    await pager.total('form', { value: formId }, 1)
    expect(counts.count).toBe(1)
    await Promise.all([pager.total('form', { value: formId }, 2), pager.total('form', { value: formId }, 2)])
    expect(counts.count).toBe(2)
  })

  it('scans a list for its position index once for all the deep pages asked for together', async () => {
    const { queries, scans } = submissionQueries(handle)
    const pager = new KeysetPager(queries)
    const offsets = [20, 40, 47, 60, 80, 81, 94]
    const pages = await Promise.all(
      offsets.map((offset) => pager.page('form', { value: formId }, offset, 10, 7)),
    )
    expect(scans.count).toBe(1)
    offsets.forEach((offset, i) => {
      expect(idsOf(pages[i])).toEqual(ids.slice(offset, offset + 10))
    })
  })

  it('counts apart the totals of different scopes and versions', async () => {
    const { queries, counts } = submissionQueries(handle)
    const pager = new KeysetPager(queries)
    await Promise.all([
      pager.total('form', { value: formId }, 3),
      pager.total('other', { value: 'form_none' }, 3),
      pager.total('form', { value: formId }, 4),
    ])
    expect(counts.count).toBe(3)
  })

  it('fails every request sharing a count that failed, and counts again on the next one', async () => {
    const { queries } = submissionQueries(handle)
    let failing = true
    const failOnce: PreparedQuery<{ total: number | string }> = (values) =>
      failing ? Promise.reject(new Error('database unreachable')) : queries.count(values)
    const pager = new KeysetPager({ ...queries, count: failOnce })
    const results = await Promise.allSettled([
      pager.total('form', { value: formId }, 5),
      pager.total('form', { value: formId }, 5),
    ])
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected'])
    failing = false
    await expect(pager.total('form', { value: formId }, 5)).resolves.toBe(95)
  })
})
