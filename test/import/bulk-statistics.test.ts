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

/** How many of `table`'s pages PostgreSQL's visibility map marks all-visible: `VACUUM` sets it. */
const visiblePages = async (table: string) =>
  Number(
    (
      await sql<{ relallvisible: number }>`select relallvisible from pg_class
        where oid = to_regclass(current_schema() || '.' || ${table})`.execute(opened.db)
    ).rows[0]?.relallvisible,
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
    // Vacuumed too, so that index-only scans need not read every new row from the table.
    expect(await visiblePages('forms')).toBeGreaterThan(0)
    // One page is no reason to analyse the pages.
    expect(await plannedRows('pages')).toBeLessThan(1)
  })
})
