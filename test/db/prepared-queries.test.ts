import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.js'
import type { DatabaseHandle } from '../../src/db/handle.js'
import { param } from '../../src/db/prepared.js'
import { buildForm, buildSubmission } from '../factories.js'
import { createMigratedTestDatabase, type TestDatabase } from '../harness.js'

describe('prepared queries', () => {
  let dir: string
  let testDatabase: TestDatabase
  let database: DatabaseHandle
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-prepared-'))
    testDatabase = await createMigratedTestDatabase(dir)
    database = openDatabase(testDatabase.url)
  })
  afterAll(async () => {
    await database.close()
    await testDatabase.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('give the rows, keys in order and values as typed, that running the same query gives', async () => {
    const { db } = database
    const form = await buildForm(db)
    for (let i = 0; i < 3; i++) await buildSubmission(db, { formId: form.id, data: { n: i } })
    const query = (formId: string) =>
      db
        .selectFrom('submissions')
        .innerJoin('forms', 'forms.id', 'submissions.form_id')
        .select([
          'submissions.id',
          'submissions.is_read',
          'submissions.notes',
          'forms.title',
          'forms.id as form',
        ])
        .select((eb) =>
          eb.selectFrom('content_versions').select('version').where('kind', '=', 'forms').as('forms_version'),
        )
        .where('submissions.form_id', '=', formId)
        .orderBy('submissions.id')
    const prepared = database.prepare(query(param('formId')))
    const rows = await prepared({ formId: form.id })
    const expected = await query(form.id).execute()
    expect(rows).toHaveLength(3)
    expect(rows).toEqual(expected)
    expect(rows.map((row) => Object.keys(row))).toEqual(expected.map((row) => Object.keys(row)))
    expect(rows[0]).toMatchObject({ is_read: 0, notes: null, form: form.id })
    expect(await prepared({ formId: 'form_none' })).toEqual([])
  })
})
