import { type ExpressionBuilder, type Selectable, type SelectQueryBuilder, sql } from 'kysely'
import type { Executor } from '../executor.js'
import { type Database, SUBMISSION_COLUMNS, type SubmissionsTable } from '../tables.js'

/**
 * The submissions table's SQL for the dashboard (the inbox and a submission's own changes): the
 * services keep the rules, the audit entries and the transactions, and hand their executor here.
 * The API's pages of submissions are `content.ts`'s; intake writes its own rows.
 */

/** A submission's row as the dashboard reads it (without the database's own `json` column). */
export type SubmissionRow = Selectable<SubmissionsTable>

/** The flags a change of many submissions sets. */
export type SubmissionFlags = Partial<Pick<SubmissionsTable, 'is_read' | 'is_starred'>>

/**
 * One view of a form's submissions as the inbox asks for it. `search` holds LIKE patterns (escaped
 * with `\`) matched case-insensitively against the data as stored (JSON text) and the notes.
 */
export interface SubmissionView {
  formId: string
  filter: 'all' | 'unread' | 'starred'
  search: { data: string; notes: string } | null
  sort: 'newest' | 'oldest'
}

type SubmissionQuery<O> = SelectQueryBuilder<Database, 'submissions', O>

/**
 * Whether a submission matches the search. Both sides go through `lower()`, so the match is the
 * same on both dialects (ASCII letters fold; other letters are left as they are by SQLite's
 * `lower()` and by PostgreSQL's under the byte-order "C" collation).
 */
const matches = (search: { data: string; notes: string }) =>
  sql<boolean>`(lower(${sql.ref('submissions.data')}) like lower(${search.data}) escape '\\' or lower(coalesce(${sql.ref('submissions.notes')}, '')) like lower(${search.notes}) escape '\\')`

/** The view's conditions; the filters follow the (form_id, …, created_at, id) indexes (migrations 001, 013). */
function scoped<O>(query: SubmissionQuery<O>, view: SubmissionView): SubmissionQuery<O> {
  let out = query.where('submissions.form_id', '=', view.formId)
  if (view.filter === 'unread') out = out.where('submissions.is_read', '=', 0)
  if (view.filter === 'starred') out = out.where('submissions.is_starred', '=', 1)
  if (view.search !== null) out = out.where(matches(view.search))
  return out
}

/** By date, then id (so the order is total): newest or oldest first. */
function ordered<O>(query: SubmissionQuery<O>, sort: SubmissionView['sort']): SubmissionQuery<O> {
  const direction = sort === 'newest' ? 'desc' : 'asc'
  return query.orderBy('submissions.created_at', direction).orderBy('submissions.id', direction)
}

/** The submission `id`, if there is one. */
export function findSubmissionById(db: Executor, id: string): Promise<SubmissionRow | undefined> {
  return db.selectFrom('submissions').select(SUBMISSION_COLUMNS).where('id', '=', id).executeTakeFirst()
}

/** The form of submission `id`, if there is such a submission. */
export function findSubmissionFormId(db: Executor, id: string): Promise<{ form_id: string } | undefined> {
  return db.selectFrom('submissions').select('form_id').where('id', '=', id).executeTakeFirst()
}

/** How many submissions form `formId` has, counted now. */
export async function countSubmissionsOfForm(db: Executor, formId: string): Promise<number> {
  const { count } = await db
    .selectFrom('submissions')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('form_id', '=', formId)
    .executeTakeFirstOrThrow()
  return Number(count)
}

/** Sets the columns `change` gives on submission `id`. */
export async function updateSubmissionRow(
  db: Executor,
  id: string,
  change: Partial<Pick<SubmissionsTable, 'is_read' | 'is_starred' | 'notes' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('submissions').set(change).where('id', '=', id).execute()
}

/** How many submissions the view holds, counted now (a search reads every row of the form it filters). */
export async function countSubmissionsInView(db: Executor, view: SubmissionView): Promise<number> {
  const { total } = await scoped(db.selectFrom('submissions'), view)
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('total'))
    .executeTakeFirstOrThrow()
  return Number(total)
}

/**
 * The ids of one window of the view: `limit` after skipping `offset`, in the view's order or, with
 * `reverse`, the opposite one (a deep page is read from the nearer end).
 */
export async function submissionIdsInView(
  db: Executor,
  view: SubmissionView,
  window: { offset: number; limit: number; reverse: boolean },
): Promise<string[]> {
  const sort = window.reverse ? (view.sort === 'newest' ? 'oldest' : 'newest') : view.sort
  const rows = await ordered(scoped(db.selectFrom('submissions').select('submissions.id'), view), sort)
    .limit(window.limit)
    .offset(window.offset)
    .execute()
  return rows.map((row) => row.id)
}

/** The submissions among `ids` (of form `formId`, when given), in `sort` order. */
export function submissionsByIds(
  db: Executor,
  ids: readonly string[],
  sort: SubmissionView['sort'],
  formId?: string,
): Promise<SubmissionRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  let query = ordered(db.selectFrom('submissions').select(SUBMISSION_COLUMNS), sort).where(
    'submissions.id',
    'in',
    [...ids],
  )
  if (formId !== undefined) query = query.where('submissions.form_id', '=', formId)
  return query.execute()
}

/**
 * Every submission of a view, in its order, `batchSize` rows at a time: each batch starts after the
 * last row of the one before (keyset on created_at and id), so memory stays one batch and a deep
 * batch costs what the first does. Rows added or removed meanwhile appear or not, once.
 */
export async function* submissionsInViewBatches(
  db: Executor,
  view: SubmissionView,
  batchSize: number,
): AsyncGenerator<SubmissionRow[]> {
  const after = view.sort === 'newest' ? '<' : '>'
  // A search walks the unsearched view in index order and asks only which keys of each window
  // match: sorting every match per batch instead grows quadratically on PostgreSQL.
  const unsearched: SubmissionView = { ...view, search: null }
  let last: { created_at: string; id: string } | undefined
  for (;;) {
    let query = ordered(scoped(db.selectFrom('submissions'), unsearched), view.sort)
    if (last) {
      const key = last
      query = query.where((eb: ExpressionBuilder<Database, 'submissions'>) =>
        eb(eb.refTuple('submissions.created_at', 'submissions.id'), after, eb.tuple(key.created_at, key.id)),
      )
    }
    if (view.search === null) {
      const rows = await query.select(SUBMISSION_COLUMNS).limit(batchSize).execute()
      if (rows.length > 0) yield rows
      if (rows.length < batchSize) return
      const end = rows[rows.length - 1] as SubmissionRow
      last = { created_at: end.created_at, id: end.id }
      continue
    }
    const window = await query
      .select(['submissions.created_at', 'submissions.id', matches(view.search).as('hit')])
      .limit(batchSize * 4)
      .execute()
    // PostgreSQL answers a boolean, SQLite 1 or 0.
    const hits = window.filter((row) => row.hit === true || Number(row.hit) === 1).map((row) => row.id)
    if (hits.length > 0) yield await submissionsByIds(db, hits, view.sort)
    if (window.length < batchSize * 4) return
    const end = window[window.length - 1] as { created_at: string; id: string }
    last = { created_at: end.created_at, id: end.id }
  }
}

/** The ids among `ids` that are submissions of form `formId`, in id order. */
export async function submissionIdsOfForm(
  db: Executor,
  formId: string,
  ids: readonly string[],
): Promise<string[]> {
  if (ids.length === 0) return []
  const rows = await db
    .selectFrom('submissions')
    .select('id')
    .where('form_id', '=', formId)
    .where('id', 'in', [...ids])
    .orderBy('id')
    .execute()
  return rows.map((row) => row.id)
}

/** Deletes the submissions `ids` of form `formId`. */
export async function deleteSubmissionsOfForm(
  db: Executor,
  formId: string,
  ids: readonly string[],
): Promise<void> {
  await db
    .deleteFrom('submissions')
    .where('form_id', '=', formId)
    .where('id', 'in', [...ids])
    .execute()
}

/** Sets `flags` (and `updated_at`) on the submissions `ids` of form `formId`. */
export async function setSubmissionFlags(
  db: Executor,
  formId: string,
  ids: readonly string[],
  flags: SubmissionFlags & { updated_at: string },
): Promise<void> {
  await db
    .updateTable('submissions')
    .set(flags)
    .where('form_id', '=', formId)
    .where('id', 'in', [...ids])
    .execute()
}

/**
 * The forms with the most unread submissions, most first, with their titles: from the counts the
 * database keeps per form (migration 010), joined to the forms that still exist.
 */
export async function busiestUnreadForms(
  db: Executor,
  limit: number,
): Promise<{ formId: string; title: string; unread: number }[]> {
  const rows = await db
    .selectFrom('form_submission_counts')
    .innerJoin('forms', 'forms.id', 'form_submission_counts.form_id')
    .select(['form_submission_counts.form_id', 'form_submission_counts.unread', 'forms.title'])
    .where('form_submission_counts.unread', '>', 0)
    .orderBy('form_submission_counts.unread', 'desc')
    .orderBy('form_submission_counts.form_id')
    .limit(limit)
    .execute()
  return rows.map((row) => ({ formId: row.form_id, title: row.title, unread: Number(row.unread) }))
}

/** Unread submissions across all forms, from the counts the database keeps per form. */
export async function unreadSubmissionTotal(db: Executor): Promise<number> {
  const { total } = await db
    .selectFrom('form_submission_counts')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string | bigint>('unread'), eb.lit(0)).as('total'))
    .executeTakeFirstOrThrow()
  return Number(total)
}

/** Deletes form `formId`'s submissions created before `before`; returns how many it deleted. */
export async function deleteSubmissionsOfFormBefore(
  db: Executor,
  formId: string,
  before: string,
): Promise<number> {
  const result = await db
    .deleteFrom('submissions')
    .where('form_id', '=', formId)
    .where('created_at', '<', before)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}
