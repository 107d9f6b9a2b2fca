import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type CompiledQuery, Kysely, SqliteDialect } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteConnection, type SqliteConnection } from '../../src/db/dialects/sqlite-driver.js'
import {
  countSubmissionsInView,
  type SubmissionView,
  submissionIdsInView,
} from '../../src/db/repositories/submissions.js'
import type { Database } from '../../src/db/tables.js'
import { formListenerColumns, submissionTargets } from '../../src/services/notifications/outbox.js'
import { buildForm, buildSubmission } from '../factories.js'
import { createMigratedTestDatabase } from '../harness.js'

/**
 * How SQLite runs statements that every post or every inbox page runs, read from its own query
 * plans: the SQL each function sends is captured through Kysely's log and explained.
 */
describe('SQLite statements on the write and inbox paths', () => {
  let dir: string
  let connection: SqliteConnection
  let db: Kysely<Database>
  const sent: CompiledQuery[] = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-statements-'))
    const file = join(dir, 'lectern.db')
    await createMigratedTestDatabase(dir, 'sqlite')
    connection = openSqliteConnection(file)
    db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: connection }),
      log: (event) => {
        if (event.level === 'query') sent.push(event.query)
      },
    })
  })
  afterAll(async () => {
    await db.destroy()
    rmSync(dir, { recursive: true, force: true })
  })

  const captured = async (work: () => Promise<unknown>): Promise<CompiledQuery[]> => {
    sent.length = 0
    await work()
    return [...sent]
  }
  const plan = (query: CompiledQuery): string =>
    connection
      .prepare(`explain query plan ${query.sql}`)
      .all(query.parameters as unknown[])
      .map((row) => (row as { detail: string }).detail)
      .join('\n')

  it('reads an unread or starred page of the inbox, and counts it, through an index of that flag in order', async () => {
    const form = await buildForm(db)
    for (let i = 0; i < 5; i++) await buildSubmission(db, { formId: form.id })
    // Either index that leads with the form and the flag holds the view as one range in order.
    const cases: [SubmissionView['filter'], RegExp][] = [
      ['unread', /USING COVERING INDEX submissions_form_read_(starred_)?order \(form_id=\? AND is_read=\?/],
      ['starred', /USING COVERING INDEX submissions_form_starred_order \(form_id=\? AND is_starred=\?/],
    ]
    for (const [filter, index] of cases) {
      for (const sort of ['newest', 'oldest'] as const) {
        const view: SubmissionView = { formId: form.id, filter, search: null, sort }
        const queries = await captured(async () => {
          await submissionIdsInView(db, view, { offset: 0, limit: 20, reverse: false })
          await countSubmissionsInView(db, view)
        })
        expect(queries).toHaveLength(2)
        for (const query of queries) {
          const explained = plan(query)
          expect(explained, `${filter} ${sort}: ${query.sql}`).toMatch(index)
          expect(explained, `${filter} ${sort}: ${query.sql}`).not.toContain('TEMP B-TREE')
        }
      }
    }
  })

  it("binds no LIKE pattern in who listens to a post's form, which SQLite would prepare again on every post", async () => {
    const queries = await captured(async () => {
      await db
        .selectFrom('forms')
        .select('id')
        .select((eb) => formListenerColumns(eb))
        .where('id', '=', 'form_x')
        .execute()
      await submissionTargets(db)
      await submissionTargets(db, ['form_x'])
    })
    expect(queries.length).toBeGreaterThanOrEqual(3)
    for (const query of queries) {
      expect(query.sql).toMatch(/ like '/)
      expect(query.sql, query.sql).not.toMatch(/ like \?/i)
    }
  })
})
