import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BULK_STATEMENT_TIMEOUT_MS } from '../../src/db/database.js'
import type { Database } from '../../src/db/tables.js'
import { BULK_SUBMISSIONS } from '../../src/services/import/batches.js'
import { createImporter, type Importer } from '../../src/services/import/index.js'
import { buildForm, buildSubmission } from '../factories.js'
import { TEST_DIALECT } from '../harness.js'
import { type ImportDatabase, openImportDatabase, useCommandLineImportDatabase } from './support.js'

/** A creation time that jumps around with `i`, so the file is in no useful order. */
const scattered = (i: number) => {
  const seconds = (i * 7_919) % 86_400
  const hh = String(Math.floor(seconds / 3600)).padStart(2, '0')
  const mm = String(Math.floor(seconds / 60) % 60).padStart(2, '0')
  const ss = String(seconds % 60).padStart(2, '0')
  return `2024-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}T${hh}:${mm}:${ss}Z`
}

/** Forms a, b and c, and BULK_SUBMISSIONS submissions dealt among them in scattered order. */
function bulkLines(): object[] {
  const forms = ['form_a', 'form_b', 'form_c']
  return [
    ...forms.map((id) => ({ kind: 'form', id, title: id })),
    ...Array.from({ length: BULK_SUBMISSIONS }, (_, i) => ({
      kind: 'submission',
      id: `submission_${String((i * 104_729) % 1_000_003).padStart(7, '0')}`,
      formId: forms[(i * 31) % 3],
      data: { i },
      createdAt: scattered(i),
    })),
  ]
}

/** Where `keys` first goes backwards, or -1 when it is sorted. */
const firstOutOfOrder = (keys: readonly string[]) => keys.findIndex((key, i) => i > 0 && key < keys[i - 1])

/** Submissions (form, creation time, id) in the order the database stores them. */
async function storedOrder(db: Kysely<Database>): Promise<string[]> {
  const position = TEST_DIALECT === 'sqlite' ? sql.raw('rowid') : sql.raw('ctid')
  const rows = await db
    .selectFrom('submissions')
    .select(['form_id', 'created_at', 'id'])
    .orderBy(position)
    .execute()
  return rows.map((row) => `${row.form_id} ${row.created_at} ${row.id}`)
}

describe('a bulk load of submissions', () => {
  // One load into an empty database serves two tests: the first only reads it, the second loads
  // the same file again on top of it, through the same connection.
  describe('into an empty database', () => {
    let loaded: ImportDatabase
    let commandLine: Importer
    let bulkFile: string
    beforeAll(async () => {
      // As `lectern import` opens it: a bulk load is one long statement.
      loaded = await openImportDatabase('lectern-import-sorted-', {
        statementTimeoutMs: BULK_STATEMENT_TIMEOUT_MS,
      })
      commandLine = createImporter(loaded.db, { ownProcess: true })
      bulkFile = join(loaded.dir, 'import.ndjson')
      writeFileSync(
        bulkFile,
        bulkLines()
          .map((line) => JSON.stringify(line))
          .join('\n'),
      )
      await commandLine.importFile(bulkFile)
    }, 120_000)
    afterAll(() => loaded.close())

    it('is stored in list order (form, creation time, id), whatever the order of the file', async () => {
      const order = await storedOrder(loaded.db)
      expect(order).toHaveLength(BULK_SUBMISSIONS)
      expect(firstOutOfOrder(order)).toBe(-1)
      // The file's own order is far from it: the test would not pass by accident.
      const fileOrder = bulkLines()
        .slice(3)
        .map((line) => {
          const { formId, createdAt, id } = line as { formId: string; createdAt: string; id: string }
          return `${formId} ${createdAt} ${id}`
        })
      expect(firstOutOfOrder(fileOrder)).toBeGreaterThan(-1)
    })

    it('leaves no stage behind, and a second bulk load into the same connection works', async () => {
      await commandLine.importFile(bulkFile)
      const result = await loaded.db
        .selectFrom('submissions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      expect(Number(result.n)).toBe(BULK_SUBMISSIONS)
      const stages =
        TEST_DIALECT === 'sqlite'
          ? await sql<{ name: string }>`select name from sqlite_temp_master where type = 'table'`.execute(
              loaded.db,
            )
          : await sql<{
              name: string
            }>`select tablename as name from pg_tables where tablename like 'lectern_%'`.execute(loaded.db)
      expect(stages.rows).toEqual([])
    })
  })

  describe('over ids repeated in the file or stored before', () => {
    const imports = useCommandLineImportDatabase('lectern-import-sorted-')

    it('gives an id repeated in the file the row, stamps and counts of writing its records in turn', async () => {
      const repeats = [
        {
          kind: 'submission',
          id: 'sub_thrice',
          formId: 'form_a',
          data: { n: 1 },
          createdAt: '2021-01-01T00:00:00Z',
        },
        {
          kind: 'submission',
          id: 'sub_twice',
          formId: 'form_b',
          data: { n: 1 },
          createdAt: '2022-05-05T00:00:00Z',
        },
        { kind: 'submission', id: 'sub_thrice', formId: 'form_b', data: { n: 2 } },
        {
          kind: 'submission',
          id: 'sub_twice',
          formId: 'form_b',
          data: { n: 2 },
          createdAt: '2019-01-01T00:00:00Z',
        },
        {
          kind: 'submission',
          id: 'sub_thrice',
          formId: 'form_c',
          data: { n: 3 },
          updatedAt: '2023-01-01T00:00:00Z',
        },
      ]
      const lines = bulkLines()
      // Spread through the file, so the repeats fall in different batches.
      for (const [n, repeat] of repeats.entries()) lines.splice(3 + n * 10_000, 0, repeat)
      const started = new Date().toISOString().slice(0, 19)
      const result = await imports.commandLine.importFile(imports.ndjsonFile(lines))
      expect(result.created.submissions).toBe(BULK_SUBMISSIONS + 2)
      expect(result.updated.submissions).toBe(3)

      const row = (id: string) =>
        imports.db.selectFrom('submissions').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
      const thrice = await row('sub_thrice')
      expect(JSON.parse(thrice.data)).toEqual({ n: 3 })
      expect(thrice).toMatchObject({
        form_id: 'form_c',
        created_at: '2021-01-01T00:00:00Z',
        updated_at: '2023-01-01T00:00:00Z',
      })
      const twice = await row('sub_twice')
      expect(JSON.parse(twice.data)).toEqual({ n: 2 })
      expect(twice.created_at).toBe('2019-01-01T00:00:00Z')
      // Its last record gave no updatedAt and replaced a row: it was updated now.
      expect(twice.updated_at >= `${started}Z`).toBe(true)
      const total = await imports.db
        .selectFrom('submissions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      expect(Number(total.n)).toBe(BULK_SUBMISSIONS + 2)
      expect(firstOutOfOrder(await storedOrder(imports.db))).toBe(-1)
    })

    it('overwrites rows stored before, keeping their creation time when the record gives none', async () => {
      await buildForm(imports.db, { id: 'form_a', title: 'Stored before' })
      await buildSubmission(imports.db, {
        id: 'sub_old',
        formId: 'form_a',
        data: { old: true },
        createdAt: '2020-01-01T00:00:00Z',
      })
      const lines = bulkLines()
      lines.splice(5, 0, { kind: 'submission', id: 'sub_old', formId: 'form_a', data: { n: 1 } })
      lines.splice(20_000, 0, { kind: 'submission', id: 'sub_old', formId: 'form_b', data: { n: 2 } })
      const result = await imports.commandLine.importFile(imports.ndjsonFile(lines))
      expect(result.created.submissions).toBe(BULK_SUBMISSIONS)
      expect(result.updated.submissions).toBe(2)
      const old = await imports.db
        .selectFrom('submissions')
        .selectAll()
        .where('id', '=', 'sub_old')
        .executeTakeFirstOrThrow()
      expect(JSON.parse(old.data)).toEqual({ n: 2 })
      expect(old).toMatchObject({ form_id: 'form_b', created_at: '2020-01-01T00:00:00Z' })
    })
  })
})
