import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ANALYZE_AFTER_ROWS } from '../../src/db/bulk-writes.js'
import { TEST_DIALECT } from '../harness.js'
import { type ImportDatabase, openImportDatabase } from './support.js'

let opened: ImportDatabase

beforeEach(async () => {
  opened = await openImportDatabase('lectern-import-statistics-')
})

afterEach(() => opened.close())

/** What PostgreSQL's planner believes `table` holds: `ANALYZE` sets it. */
const plannedRows = async (table: string) =>
  Number(
    (
      await sql<{ reltuples: number }>`select reltuples from pg_class
        where oid = to_regclass(current_schema() || '.' || ${table})`.execute(opened.db)
    ).rows[0]?.reltuples,
  )

describe.runIf(TEST_DIALECT === 'postgres')('an import of many records on PostgreSQL', () => {
  it('refreshes the statistics of the tables it filled, so the planner knows they are large', async () => {
    const path = join(opened.dir, 'forms.ndjson')
    const lines = Array.from({ length: ANALYZE_AFTER_ROWS }, (_, i) =>
      JSON.stringify({ kind: 'form', id: `form_${i}`, title: `Form ${i}` }),
    )
    writeFileSync(
      path,
      [...lines, JSON.stringify({ kind: 'page', title: 'P', slug: 'p', path: '/p' })].join('\n'),
    )
    await opened.importer.importFile(path)
    expect(await plannedRows('forms')).toBe(ANALYZE_AFTER_ROWS)
    // One page is no reason to analyse the pages.
    expect(await plannedRows('pages')).toBeLessThan(1)
  })
})
