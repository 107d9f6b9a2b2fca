import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { createMigrator, migrateToLatest } from '../../src/db/migrate.js'
import { SUBMISSION_COLUMNS, type SubmissionsTable } from '../../src/db/tables.js'
import { presentSubmission } from '../../src/resources/submission.js'
import { createTestDatabase, type TestDatabase } from '../harness.js'

const ROWS: SubmissionsTable[] = [
  {
    id: 'submission_plain',
    form_id: 'form_old',
    data: JSON.stringify({ email: 'ada@example.com', 'quote "and" \\ line\nbreak': ['ü', 1, null] }),
    ip_address: '203.0.113.9',
    user_agent: 'Mozilla/5.0 "quoted"',
    referrer: null,
    submitted_by: null,
    is_read: 1,
    is_starred: 0,
    notes: 'called back\ttwice',
    created_at: '2023-03-01T00:00:00Z',
    updated_at: '2023-03-02T00:00:00Z',
  },
  {
    id: 'submission_spaced',
    form_id: 'form_old',
    // Not in the form Lectern writes: parsed and written again.
    data: ' {"a": [1, 2]} ',
    ip_address: null,
    user_agent: null,
    referrer: 'https://example.com/',
    submitted_by: 'grace@example.com',
    is_read: 0,
    is_starred: 1,
    notes: null,
    created_at: '2023-04-01T00:00:00Z',
    updated_at: '2023-04-01T00:00:00Z',
  },
]

describe('migration 009 on a database that already holds submissions', () => {
  let dir: string
  let testDatabase: TestDatabase
  let handle: DatabaseHandle

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-migration-'))
    testDatabase = await createTestDatabase(dir)
    handle = openDatabase(testDatabase.url)
    const { error } = await (await createMigrator(handle)).migrateTo('008-submission-inbox')
    if (error) throw error
    const now = '2023-01-01T00:00:00Z'
    await handle.db
      .insertInto('forms')
      .values({
        id: 'form_old',
        title: 'Old',
        description: null,
        is_active: 1,
        created_at: now,
        updated_at: now,
      })
      .execute()
    await handle.db.insertInto('submissions').values(ROWS).execute()
  })
  afterEach(async () => {
    await handle.close()
    await testDatabase.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  const readJson = async () =>
    handle.db.selectFrom('submissions').select(['id', 'json']).orderBy('id').execute()

  it('gives every existing submission its JSON, as the API writes it', async () => {
    await migrateToLatest(handle)
    const written = new Map((await readJson()).map((row) => [row.id, row.json]))
    // Byte for byte for data in the form Lectern writes; the same value for data written otherwise.
    expect(written.get('submission_plain')).toBe(JSON.stringify(presentSubmission(ROWS[0])))
    expect(JSON.parse(written.get('submission_spaced') as string)).toEqual(presentSubmission(ROWS[1]))
  })

  it('goes down and up again without losing a row', async () => {
    await migrateToLatest(handle)
    // Down through every later migration to just before 009, which exercises their downs too.
    const { error } = await (await createMigrator(handle)).migrateTo('008-submission-inbox')
    if (error) throw error
    await expect(readJson()).rejects.toThrow()
    expect(
      await handle.db.selectFrom('submissions').select(SUBMISSION_COLUMNS).orderBy('id').execute(),
    ).toEqual(ROWS)
    await migrateToLatest(handle)
    expect((await readJson()).map((row) => JSON.parse(row.json))).toEqual(
      ROWS.map((row) => JSON.parse(JSON.stringify(presentSubmission(row)))),
    )
  })
})
