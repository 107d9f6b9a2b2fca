import type { Kysely } from 'kysely'
import { createContentCache, readFormStates } from '../db/content-version.js'
import { formExists } from '../db/repositories/forms.js'
import {
  busiestUnreadForms,
  countSubmissionsInView,
  deleteSubmissionsOfForm,
  findSubmissionById,
  type SubmissionFlags,
  type SubmissionRow,
  type SubmissionView,
  setSubmissionFlags,
  submissionIdsInView,
  submissionIdsOfForm,
  submissionsByIds,
  submissionsInViewBatches,
  unreadSubmissionTotal,
} from '../db/repositories/submissions.js'
import type { Database } from '../db/tables.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { presentSubmission, type Submission, submissionJson } from '../resources/submission.js'
import type { PageOf } from '../schemas.js'
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

const BULK_CHANGES: Record<Exclude<BulkAction, 'delete'>, SubmissionFlags> = {
  read: { is_read: 1 },
  unread: { is_read: 0 },
  star: { is_starred: 1 },
  unstar: { is_starred: 0 },
}

/** The view as the repository reads it: the search as LIKE patterns over the stored data and the notes. */
function asRepositoryView(view: InboxQuery): SubmissionView {
  // The data is matched as stored, as JSON text, so the search text is JSON-escaped first: a `"`
  // in a value is `\"` there.
  const search =
    view.search === ''
      ? null
      : {
          data: containsPattern(JSON.stringify(view.search).slice(1, -1)),
          notes: containsPattern(view.search),
        }
  return { formId: view.formId, filter: view.filter, search, sort: view.sort }
}

/**
 * The submission inbox of the dashboard: a form's submissions filtered, searched and sorted, pages
 * of them, exports of a whole view in batches, unread counts, and changes to many at once. Every
 * change is audited in its own transaction; values reach the database as parameters only.
 */
export function createInboxService(db: Kysely<Database>) {
  const mustExist = async (formId: string) => {
    if (!(await formExists(db, formId))) throw new NotFoundError(`Form '${formId}' not found`)
  }

  // A view's total: "all" and "unread" without a search are the counts the database keeps per form
  // (migration 010); any other view is counted once per version of the form's submissions.
  const totals = createContentCache<number>()

  const countView = async (view: InboxQuery): Promise<number> => {
    const state = (await readFormStates(db, [view.formId])).get(view.formId)
    if (view.search === '' && view.filter === 'all') return state?.total ?? 0
    if (view.search === '' && view.filter === 'unread') return state?.unread ?? 0
    return totals.get(JSON.stringify([view.formId, view.filter, view.search]), state?.version ?? 0, () =>
      countSubmissionsInView(db, asRepositoryView(view)),
    )
  }

  return {
    /** Reads a search text typed into the inbox (see `checkSearch`). */
    checkSearch,

    /**
     * One numbered page of a view, with the view's total. The filters and the order follow the
     * (form_id, …, created_at, id) indexes (migrations 001 and 013); a search reads every row of the
     * form (or of its unread or starred ones) and compares its text. The page's ids are chosen first
     * (from whichever end of the order is nearer, see `pageWindow`) and only their rows read, so a
     * deep page skips index entries rather than whole rows.
     */
    async listPage(view: InboxQuery, page: number, pageSize: number): Promise<PageOf<Submission>> {
      await mustExist(view.formId)
      const total = await countView(view)
      const window = pageWindow({ page, size: pageSize }, total)
      const ids = window.limit === 0 ? [] : await submissionIdsInView(db, asRepositoryView(view), window)
      const rows = await submissionsByIds(db, ids, view.sort)
      return { items: rows.map(presentSubmission), total }
    },

    countView,

    /**
     * Every submission of a view, in its order, `batchSize` rows at a time: each batch starts after
     * the last row of the one before (keyset on created_at and id), so memory stays one batch and a
     * deep batch costs what the first does. Rows added or removed meanwhile appear or not, once.
     */
    async *exportRows(view: InboxQuery, batchSize = 500): AsyncGenerator<SubmissionRow[]> {
      await mustExist(view.formId)
      yield* submissionsInViewBatches(db, asRepositoryView(view), batchSize)
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
    busiestUnread: (limit: number): Promise<{ formId: string; title: string; unread: number }[]> =>
      busiestUnreadForms(db, limit),

    /** Unread submissions across all forms (the overview's figure). */
    unreadTotal: (): Promise<number> => unreadSubmissionTotal(db),

    /** The selected submissions that belong to the form, in the view's order (for a confirmation to list). */
    async selectedSubmissions(
      formId: string,
      ids: readonly string[],
      sort: InboxSort = 'newest',
    ): Promise<Submission[]> {
      if (ids.length > MAX_BULK_IDS)
        throw new ValidationError(`At most ${MAX_BULK_IDS} submissions can be changed at once.`)
      await mustExist(formId)
      return (await submissionsByIds(db, ids, sort, formId)).map(presentSubmission)
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
      await mustExist(formId)
      return db.transaction().execute(async (trx) => {
        const found = await submissionIdsOfForm(trx, formId, ids)
        if (found.length === 0) return 0
        if (action === 'delete') {
          await deleteSubmissionsOfForm(trx, formId, found)
          await recordAudit(trx, {
            actor,
            action: 'submissions.deleted',
            target: formId,
            detail: { count: found.length, ids: found },
          })
        } else {
          const change = BULK_CHANGES[action]
          await setSubmissionFlags(trx, formId, found, { ...change, updated_at: now() })
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
      const row = await findSubmissionById(db, id)
      if (!row) throw new NotFoundError(`Submission '${id}' not found`)
      return { formId: row.form_id, submission: presentSubmission(row) }
    },
  }
}

export type InboxService = ReturnType<typeof createInboxService>
