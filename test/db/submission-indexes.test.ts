import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'

/**
 * Every index of `submissions` is written by every new submission, so each must serve a read. The
 * partial indexes of migration 008 served none once migration 013 bound the inbox's flags; migration
 * 015 drops them.
 */
describe('the indexes of submissions', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  it('are the order index and the flag-first ones, none of them partial', async () => {
    const db = ctx.database.db
    const indexes =
      ctx.database.dialect === 'sqlite'
        ? (
            await sql<{ name: string; partial: number; origin: string }>`
              select name, partial, origin from pragma_index_list('submissions')`.execute(db)
          ).rows
            .filter((row) => row.origin === 'c')
            .map((row) => ({ name: row.name, partial: Number(row.partial) === 1 }))
        : (
            await sql<{ indexname: string; indexdef: string }>`
              select indexname, indexdef from pg_indexes
              where tablename = 'submissions' and schemaname = current_schema() and indexname not like '%_pkey'`.execute(
              db,
            )
          ).rows.map((row) => ({ name: row.indexname, partial: / where /i.test(row.indexdef) }))
    expect(indexes.filter((index) => index.partial)).toEqual([])
    expect(indexes.map((index) => index.name).sort()).toEqual([
      'submissions_form_order',
      'submissions_form_read_order',
      'submissions_form_read_starred_order',
      'submissions_form_starred_order',
    ])
  })
})
