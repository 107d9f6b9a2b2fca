import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { BULK_SUBMISSIONS } from '../../src/services/import/batches.js'
import { buildForm, buildSubmission } from '../factories.js'
import { TEST_DIALECT } from '../harness.js'
import { contentSnapshot, refuseSubmissionsNotedExplode, useCommandLineImportDatabase } from './support.js'

const imports = useCommandLineImportDatabase('lectern-import-own-process-')

/** The submissions table's indexes and their definitions. */
async function submissionIndexes() {
  const { rows } =
    TEST_DIALECT === 'sqlite'
      ? await sql<{
          name: string
          definition: string | null
        }>`select name, sql as definition from sqlite_master
          where type = 'index' and tbl_name = 'submissions' order by name`.execute(imports.db)
      : await sql<{
          name: string
          definition: string | null
        }>`select indexname as name, indexdef as definition
          from pg_indexes where tablename = 'submissions' and schemaname = current_schema() order by indexname`.execute(
          imports.db,
        )
  return rows
}

const bulkLines = (extra: object[] = []) => [
  { kind: 'form', id: 'form_bulk', title: 'Bulk' },
  ...Array.from({ length: BULK_SUBMISSIONS }, (_, i) => ({
    kind: 'submission',
    formId: 'form_bulk',
    data: { i },
    isRead: i % 2 === 0,
    isStarred: i % 7 === 0,
    createdAt: `2024-01-01T00:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`,
  })),
  ...extra,
]

describe('the command-line importer, which has its process to itself', () => {
  it('writes a bulk import whole and leaves every index of submissions as it was, partial ones included', async () => {
    const before = await submissionIndexes()
    const cacheSize = async () =>
      TEST_DIALECT === 'sqlite'
        ? (await sql<{ cache_size: number }>`pragma cache_size`.execute(imports.db)).rows
        : []
    const cacheBefore = await cacheSize()

    const result = await imports.commandLine.importFile(imports.ndjsonFile(bulkLines()))

    expect(result.created.submissions).toBe(BULK_SUBMISSIONS)
    expect(await submissionIndexes()).toEqual(before)
    const unread = await imports.db
      .selectFrom('submissions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('form_id', '=', 'form_bulk')
      .where('is_read', '=', 0)
      .executeTakeFirstOrThrow()
    expect(Number(unread.n)).toBe(BULK_SUBMISSIONS / 2)
    if (TEST_DIALECT === 'sqlite') {
      // The large page cache is the import's only: the connection gets its own back.
      expect(await cacheSize()).toEqual(cacheBefore)
      const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(imports.db)
      expect(check.rows).toEqual([{ integrity_check: 'ok' }])
    }
  })

  it('writes nothing, and keeps every index, when the database refuses the last of a bulk import', async () => {
    await buildForm(imports.db, { id: 'form_seed', title: 'Seed' })
    await buildSubmission(imports.db, { formId: 'form_seed', id: 'submission_seed' })
    await refuseSubmissionsNotedExplode(imports.db)
    const before = await contentSnapshot(imports.db)
    const indexes = await submissionIndexes()

    const lines = bulkLines([{ kind: 'submission', formId: 'form_bulk', data: {}, notes: 'explode' }])
    await expect(imports.commandLine.importFile(imports.ndjsonFile(lines))).rejects.toThrow(
      'refused by trigger',
    )

    expect(await contentSnapshot(imports.db)).toEqual(before)
    expect(await submissionIndexes()).toEqual(indexes)
  })
})

describe('importing submissions into an empty table', () => {
  it('counts a repeated id as an update across batches, keeping the creation time of its first record', async () => {
    const filler = Array.from({ length: 1200 }, (_, i) => ({
      kind: 'submission',
      formId: 'form_a',
      data: { i },
    }))
    const result = await imports.commandLine.importFile(
      imports.ndjsonFile([
        { kind: 'form', id: 'form_a', title: 'A' },
        {
          kind: 'submission',
          id: 'submission_twice',
          formId: 'form_a',
          data: { v: 'first' },
          createdAt: '2020-05-01T00:00:00Z',
        },
        ...filler,
        { kind: 'submission', id: 'submission_twice', formId: 'form_a', data: { v: 'last' } },
      ]),
    )

    expect(result.created.submissions).toBe(1201)
    expect(result.updated.submissions).toBe(1)
    const row = await imports.db
      .selectFrom('submissions')
      .select(['data', 'created_at'])
      .where('id', '=', 'submission_twice')
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ data: '{"v":"last"}', created_at: '2020-05-01T00:00:00Z' })
  })
})
