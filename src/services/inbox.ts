import { type ExpressionBuilder, type Kysely, type Selectable, type SelectQueryBuilder, sql } from 'kysely'
import { createContentCache, readFormStates } from '../db/content-version.js'
import { presentSubmission, submissionJson } from '../db/repositories/content.js'
import { type Database, SUBMISSION_COLUMNS, type SubmissionsTable } from '../db/tables.js'
import { NotFoundError, ValidationError } from '../errors.js'
import type { PageOf, Submission } from '../schemas.js'
import { now } from '../time.js'
import { type Actor, recordAudit } from './audit.js'
import { checkSearch, containsPattern, pageWindow } from './listing.js'

/** Which submissions of a form the inbox shows. */
export const INBOX_FILTERS = ['all', 'unread', 'starred'] as const
export type InboxFilter = (typeof INBOX_FILTERS)[number]

/** The inbox's orders: by date (then id, so the order is total), newest or oldest first. */
export const INBOX_SORTS = ['newest', 'oldest'] as const
export type InboxSort = (typeof INBOX_SORTS)[number]

export { MAX_SEARCH_LENGTH } from './listing.js'

/** The most submissions one bulk action changes: a page's worth at the largest page size. */
export const MAX_BULK_IDS = 100

/** One view of a form's submissions: the filter, the search text and the order. */
export interface InboxQuery {
  formId: string
  filter: InboxFilter
  /** Matched case-insensitively as a substring of the submitted data (its JSON text) or the notes; '' for none. */
  search: string
  sort: InboxSort
}

/** What a bulk action does to each selected submission. */
export type BulkAction = 'read' | 'unread' | 'star' | 'unstar' | 'delete'

const BULK_CHANGES: Record<
  Exclude<BulkAction, 'delete'>,
  Partial<Pick<SubmissionsTable, 'is_read' | 'is_starred'>>
> = {
  read: { is_read: 1 },
  unread: { is_read: 0 },
  star: { is_starred: 1 },
  unstar: { is_starred: 0 },
}

type SubmissionQuery<O> = SelectQueryBuilder<Database, 'submissions', O>

/**
 * The submission inbox of the dashboard: a form's submissions filtered, searched and sorted, pages
 * of them, exports of a whole view in batches, unread counts, and changes to many at once. Every
 * change is audited in its own transaction; values reach the database as parameters only.
 */
export function createInboxService(db: Kysely<Database>) {
  const formExists = async (formId: string) => {
    const row = await db.selectFrom('forms').select('id').where('id', '=', formId).executeTakeFirst()
    if (!row) throw new NotFoundError(`Form '${formId}' not found`)
  }

  /**
   * The view's conditions. The search compares `lower()` of both sides, so it is the same on both
   * dialects (ASCII letters fold; `lower()` on SQLite, and on PostgreSQL's byte-order "C" collation,
   * leaves other letters as they are). The data is matched as stored, as JSON text, so the search
   * text is JSON-escaped first: a `"` in a value is `\"` there.
   */
  const matches = (search: string) => {
    const inData = containsPattern(JSON.stringify(search).slice(1, -1))
    const inNotes = containsPattern(search)
    return sql<boolean>`(lower(${sql.ref('submissions.data')}) like lower(${inData}) escape '\\' or lower(coalesce(${sql.ref('submissions.notes')}, '')) like lower(${inNotes}) escape '\\')`
  }

  const scoped = <O>(query: SubmissionQuery<O>, view: InboxQuery): SubmissionQuery<O> => {
    let scopedQuery = query.where('submissions.form_id', '=', view.formId)
    if (view.filter === 'unread') scopedQuery = scopedQuery.where('submissions.is_read', '=', 0)
    if (view.filter === 'starred') scopedQuery = scopedQuery.where('submissions.is_starred', '=', 1)
    if (view.search !== '') scopedQuery = scopedQuery.where(matches(view.search))
    return scopedQuery
  }

  const ordered = <O>(query: SubmissionQuery<O>, sort: InboxSort): SubmissionQuery<O> => {
    const direction = sort === 'newest' ? 'desc' : 'asc'
    return query.orderBy('submissions.created_at', direction).orderBy('submissions.id', direction)
  }

  // A view's total: "all" and "unread" without a search are the counts the database keeps per form
  // (migration 010); any other view is counted once per version of the form's submissions.
  const totals = createContentCache<number>()

  const countView = async (view: InboxQuery): Promise<number> => {
    const state = (await readFormStates(db, [view.formId])).get(view.formId)
    if (view.search === '' && view.filter === 'all') return state?.total ?? 0
    if (view.search === '' && view.filter === 'unread') return state?.unread ?? 0
    return totals.get(
      JSON.stringify([view.formId, view.filter, view.search]),
      state?.version ?? 0,
      async () => {
        const { total } = await scoped(db.selectFrom('submissions'), view)
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('total'))
          .executeTakeFirstOrThrow()
        return Number(total)
      },
    )
  }

  /** The selected ids that are submissions of the form (others are left alone, silently). */
  const selected = async (trx: Kysely<Database>, formId: string, ids: readonly string[]) => {
    if (ids.length === 0) return []
    const rows = await trx
      .selectFrom('submissions')
      .select('id')
      .where('form_id', '=', formId)
      .where('id', 'in', [...ids])
      .orderBy('id')
      .execute()
    return rows.map((row) => row.id)
  }

  return {
    /** Reads a search text typed into the inbox (see `checkSearch`). */
    checkSearch,

    /**
     * One numbered page of a view, with the view's total. The filters and the order follow the
     * (form_id, created_at, id) indexes (migrations 001 and 008); a search reads every row of the
     * form (or of its unread or starred ones) and compares its text. The page's ids are chosen first
     * (from whichever end of the order is nearer, see `pageWindow`) and only their rows read, so a
     * deep page skips index entries rather than whole rows.
     */
    async listPage(view: InboxQuery, page: number, pageSize: number): Promise<PageOf<Submission>> {
      await formExists(view.formId)
      const total = await countView(view)
      const window = pageWindow({ page, size: pageSize }, total)
      const reversed: InboxSort = view.sort === 'newest' ? 'oldest' : 'newest'
      const ids =
        window.limit === 0
          ? []
          : await ordered(
              scoped(db.selectFrom('submissions').select('submissions.id'), view),
              window.reverse ? reversed : view.sort,
            )
              .limit(window.limit)
              .offset(window.offset)
              .execute()
      const rows =
        ids.length === 0
          ? []
          : await ordered(db.selectFrom('submissions').select(SUBMISSION_COLUMNS), view.sort)
              .where(
                'submissions.id',
                'in',
                ids.map((row) => row.id),
              )
              .execute()
      return { items: rows.map(presentSubmission), total }
    },

    countView,

    /**
     * Every submission of a view, in its order, `batchSize` rows at a time: each batch starts after
     * the last row of the one before (keyset on created_at and id), so memory stays one batch and a
     * deep batch costs what the first does. Rows added or removed meanwhile appear or not, once.
     */
    async *exportRows(view: InboxQuery, batchSize = 500): AsyncGenerator<Selectable<SubmissionsTable>[]> {
      await formExists(view.formId)
      const after = view.sort === 'newest' ? '<' : '>'
      // With a search, the planner may estimate few matches and sort every match for each batch
      // (quadratic on PostgreSQL). So the walk goes over the unsearched view in index order, a
      // window of keys at a time, asking only which keys match; then it reads the matching rows.
      const unsearched: InboxQuery = { ...view, search: '' }
      let last: { created_at: string; id: string } | undefined
      for (;;) {
        let query = ordered(scoped(db.selectFrom('submissions'), unsearched), view.sort)
        if (last) {
          const key = last
          query = query.where((eb: ExpressionBuilder<Database, 'submissions'>) =>
            eb(
              eb.refTuple('submissions.created_at', 'submissions.id'),
              after,
              eb.tuple(key.created_at, key.id),
            ),
          )
        }
        if (view.search === '') {
          const rows = await query.select(SUBMISSION_COLUMNS).limit(batchSize).execute()
          if (rows.length > 0) yield rows
          if (rows.length < batchSize) return
          const end = rows[rows.length - 1] as Selectable<SubmissionsTable>
          last = { created_at: end.created_at, id: end.id }
          continue
        }
        const window = await query
          .select(['submissions.created_at', 'submissions.id', matches(view.search).as('hit')])
          .limit(batchSize * 4)
          .execute()
        // PostgreSQL answers a boolean, SQLite 1 or 0.
        const hits = window.filter((row) => row.hit === true || Number(row.hit) === 1).map((row) => row.id)
        if (hits.length > 0)
          yield await ordered(db.selectFrom('submissions').select(SUBMISSION_COLUMNS), view.sort)
            .where('submissions.id', 'in', hits)
            .execute()
        if (window.length < batchSize * 4) return
        const end = window[window.length - 1] as { created_at: string; id: string }
        last = { created_at: end.created_at, id: end.id }
      }
    },

    /** The batches of `exportRows`, each submission as JSON text exactly as the API writes it. */
    async *exportJson(view: InboxQuery, batchSize = 500): AsyncGenerator<string[]> {
      for await (const batch of this.exportRows(view, batchSize)) yield batch.map(submissionJson)
    },

    /** Records that a view was exported: the form, the view, the format and how many rows it held. */
    recordExport: (view: InboxQuery, format: 'csv' | 'json', count: number, actor: Actor): Promise<void> =>
      db.transaction().execute((trx) =>
        recordAudit(trx, {
          actor,
          action: 'submissions.exported',
          target: view.formId,
          // The search text may be personal data (an email typed to find someone): only whether there was one.
          detail: { format, count, filter: view.filter, sort: view.sort, searched: view.search !== '' },
        }),
      ),

    /** Unread submissions per form, for the given forms (forms with none are absent). */
    async unreadCounts(formIds: readonly string[]): Promise<Map<string, number>> {
      const states = await readFormStates(db, formIds)
      return new Map(
        [...states].filter(([, state]) => state.unread > 0).map(([id, state]) => [id, state.unread]),
      )
    },

    /** The forms with the most unread submissions, most first, with their titles (the overview's list). */
    async busiestUnread(limit: number): Promise<{ formId: string; title: string; unread: number }[]> {
      // From the counts the database keeps per form, with the titles of the forms that still exist.
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
    },

    /** Unread submissions across all forms (the overview's figure). */
    async unreadTotal(): Promise<number> {
      const { total } = await db
        .selectFrom('form_submission_counts')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string | bigint>('unread'), eb.lit(0)).as('total'))
        .executeTakeFirstOrThrow()
      return Number(total)
    },

    /** The selected submissions that belong to the form, in the view's order (for a confirmation to list). */
    async selectedSubmissions(
      formId: string,
      ids: readonly string[],
      sort: InboxSort = 'newest',
    ): Promise<Submission[]> {
      if (ids.length > MAX_BULK_IDS)
        throw new ValidationError(`At most ${MAX_BULK_IDS} submissions can be changed at once.`)
      await formExists(formId)
      if (ids.length === 0) return []
      const rows = await ordered(db.selectFrom('submissions').select(SUBMISSION_COLUMNS), sort)
        .where('submissions.form_id', '=', formId)
        .where('submissions.id', 'in', [...ids])
        .execute()
      return rows.map(presentSubmission)
    },

    /**
     * Applies `action` to the selected submissions of a form, in one transaction with one audit
     * entry (`submissions.updated` or `submissions.deleted`, listing the ids). Ids that are not the
     * form's submissions are skipped; returns how many were changed. Deleting erases the rows: the
     * API stops listing them on the next request (the content version moves with the write).
     */
    async applyBulk(
      formId: string,
      ids: readonly string[],
      action: BulkAction,
      actor: Actor,
    ): Promise<number> {
      if (ids.length > MAX_BULK_IDS)
        throw new ValidationError(`At most ${MAX_BULK_IDS} submissions can be changed at once.`)
      await formExists(formId)
      return db.transaction().execute(async (trx) => {
        const found = await selected(trx, formId, ids)
        if (found.length === 0) return 0
        if (action === 'delete') {
          await trx.deleteFrom('submissions').where('form_id', '=', formId).where('id', 'in', found).execute()
          await recordAudit(trx, {
            actor,
            action: 'submissions.deleted',
            target: formId,
            detail: { count: found.length, ids: found },
          })
        } else {
          const change = BULK_CHANGES[action]
          await trx
            .updateTable('submissions')
            .set({ ...change, updated_at: now() })
            .where('form_id', '=', formId)
            .where('id', 'in', found)
            .execute()
          await recordAudit(trx, {
            actor,
            action: 'submissions.updated',
            target: formId,
            detail: {
              count: found.length,
              ids: found,
              ...('is_read' in change ? { isRead: change.is_read === 1 } : {}),
              ...('is_starred' in change ? { isStarred: change.is_starred === 1 } : {}),
            },
          })
        }
        return found.length
      })
    },

    /** One submission with its form id, for the delete confirmation; a `NotFoundError` when there is none. */
    async getSubmission(id: string): Promise<{ formId: string; submission: Submission }> {
      const row = await db
        .selectFrom('submissions')
        .select(SUBMISSION_COLUMNS)
        .where('id', '=', id)
        .executeTakeFirst()
      if (!row) throw new NotFoundError(`Submission '${id}' not found`)
      return { formId: row.form_id, submission: presentSubmission(row) }
    },
  }
}

export type InboxService = ReturnType<typeof createInboxService>
