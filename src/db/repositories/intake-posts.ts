import { sql } from 'kysely'
import type { Executor } from '../executor.js'
import type { DatabaseHandle } from '../handle.js'
import { type PreparedQuery, param } from '../prepared.js'
import { type SpamSubmissionsTable, SUBMISSION_COLUMNS } from '../tables.js'
import { formListenerColumns, nobodyListens } from './webhook-endpoints.js'

/**
 * The intake's SQL (`services/intake.ts`): the posting path (the form read for a post, the guarded
 * insert of plain posts as prepared statements, the plain inserts of submissions). A form's intake
 * settings and the retention deletes are `forms.ts`'s and `submissions.ts`'s. The service keeps the rules, the
 * audit entries and the transactions, and hands its executor here. Who listens to a form's new
 * submissions is read and checked with the endpoints' fragments (`webhook-endpoints.ts`).
 */

/**
 * Prepares the read of a post's form once: every post's form, who listens to its new submissions
 * and the forms version, in one prepared statement. The returned function runs it.
 */
export function prepareFormForPost(database: Pick<DatabaseHandle, 'db' | 'prepare'>) {
  const readForm = database.prepare(
    database.db
      .selectFrom('forms')
      .select(['id', 'title', 'description', 'is_active', 'intake'])
      .select((eb) => formListenerColumns(eb))
      .select((eb) =>
        eb.selectFrom('content_versions').select('version').where('kind', '=', 'forms').as('forms_version'),
      )
      .where('id', '=', param('formId')),
  )
  return (formId: string) => readForm({ formId })
}

/** A post's row as the intake writes it, to submissions or to spam: the columns of a caught post. */
export type PostedRow = SpamSubmissionsTable

/** A plain post's row, with the forms version its form was read at. */
export interface GuardedRow extends PostedRow {
  read_at: number
}

/**
 * A row no insert takes: its guard compares the forms version with null, which is never true, so
 * its `SELECT` yields nothing (and no column's constraint is ever checked against it).
 */
const PADDING_ROW: Record<keyof GuardedRow, null> = {
  id: null,
  form_id: null,
  data: null,
  ip_address: null,
  user_agent: null,
  referrer: null,
  created_at: null,
  read_at: null,
}

/** Row `index` of a prepared `guardedInsert`: each value a named placeholder (`id_0`, `form_id_0`, …). */
function placeholderRow(index: number): GuardedRow {
  return Object.fromEntries(
    Object.keys(PADDING_ROW).map((column) => [column, param(`${column}_${index}`)]),
  ) as unknown as GuardedRow
}

/**
 * Inserts each row only while the forms version is still the one its form was read at and still
 * nobody listens to its form's new submissions: a post decided on a form read earlier (or
 * remembered) is stored only if the form it was decided on is the form as it stands, on whichever
 * instance or process changed it. One `SELECT … WHERE` per row, joined by `UNION ALL`; returns the
 * ids inserted.
 */
function guardedInsert(executor: Executor, rows: GuardedRow[]) {
  const selects = rows.map((row) =>
    executor
      .selectNoFrom((eb) => [
        eb.val(row.id).as('id'),
        eb.val(row.form_id).as('form_id'),
        eb.val(row.data).as('data'),
        eb.val(row.ip_address).as('ip_address'),
        eb.val(row.user_agent).as('user_agent'),
        eb.val(row.referrer).as('referrer'),
        sql<null>`null`.as('submitted_by'),
        sql<number>`0`.as('is_read'),
        sql<number>`0`.as('is_starred'),
        sql<null>`null`.as('notes'),
        eb.val(row.created_at).as('created_at'),
        eb.val(row.created_at).as('updated_at'),
      ])
      .where((eb) =>
        eb.and([
          eb(
            eb.selectFrom('content_versions').select('version').where('kind', '=', 'forms'),
            '=',
            row.read_at,
          ),
          nobodyListens(eb, row.form_id),
        ]),
      ),
  )
  const [first, ...rest] = selects as [(typeof selects)[number], ...typeof selects]
  return executor
    .insertInto('submissions')
    .columns(SUBMISSION_COLUMNS)
    .expression(rest.reduce((union, select) => union.unionAll(select), first))
    .returning('id')
}

/** Runs `guardedInsert` of `rows` as built for them (inside a transaction); returns the ids inserted. */
export function insertGuardedRows(executor: Executor, rows: GuardedRow[]): Promise<{ id: string }[]> {
  return guardedInsert(executor, rows).execute()
}

/**
 * Groups of up to this many posts (no spam, no listeners) are written by a prepared statement of
 * their size. A larger group (under load, most posts come in groups of tens) takes the
 * statement of the next power of two and fills the rows it does not use with padding, so a handful
 * of statements serves every size and none is built and parsed per group.
 */
const PREPARED_GROUP_ROWS = 8

/** The rows of the prepared statement that writes a group of `rows` posts. */
function preparedGroupRows(rows: number): number {
  if (rows <= PREPARED_GROUP_ROWS) return rows
  let size = PREPARED_GROUP_ROWS * 2
  while (size < rows) size *= 2
  return size
}

/**
 * The guarded insert as prepared statements: the returned function writes `rows` (on their own,
 * outside any transaction) and returns the ids inserted.
 */
export function prepareGuardedInserts(database: Pick<DatabaseHandle, 'db' | 'prepare'>) {
  // A post alone, as most are below a few hundred a second, or a few arriving together, is one
  // prepared statement: building and compiling the insert each time cost about as much as SQLite's
  // own work on it. One statement per size of `preparedGroupRows`, prepared on first use.
  const preparedInserts = new Map<number, PreparedQuery<{ id: string }>>()
  return async function insertGuarded(rows: GuardedRow[]): Promise<{ id: string }[]> {
    const size = preparedGroupRows(rows.length)
    let insert = preparedInserts.get(size)
    if (insert === undefined) {
      const placeholders = Array.from({ length: size }, (_, index) => placeholderRow(index))
      insert = database.prepare(guardedInsert(database.db, placeholders))
      preparedInserts.set(size, insert)
    }
    const values: Record<string, unknown> = {}
    for (let index = 0; index < size; index++) {
      for (const [name, value] of Object.entries(rows[index] ?? PADDING_ROW))
        values[`${name}_${index}`] = value
    }
    return insert(values)
  }
}

/**
 * Writes posts as new submissions: unread, unstarred, without notes, and changed when each was
 * created, or at `updatedAt` (a post released from spam keeps when it arrived, and is changed now).
 */
export async function insertPostedSubmissions(
  executor: Executor,
  rows: PostedRow[],
  updatedAt?: string,
): Promise<void> {
  await executor
    .insertInto('submissions')
    .values(
      rows.map((values) => ({
        ...values,
        submitted_by: null,
        is_read: 0,
        is_starred: 0,
        notes: null,
        updated_at: updatedAt ?? values.created_at,
      })),
    )
    .execute()
}
