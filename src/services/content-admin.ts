import type { Kysely } from 'kysely'
import { presentPage, presentSubmission } from '../db/repositories/content.js'
import type { Database } from '../db/tables.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { FIELD_LIMITS, textProblem } from '../limits.js'
import type { ListOptions, Page, PageOf, Submission } from '../schemas.js'
import { now } from '../time.js'
import { type Actor, recordAudit } from './audit.js'

/** A form as the dashboard lists it: the API's fields plus the hidden flag and the submission count. */
export interface AdminForm {
  id: string
  title: string
  description: string | null
  isActive: boolean
  submissionCount: number
  /** Submissions not yet marked as read (counted from the partial index of migration 008). */
  unreadCount: number
  createdAt: string
}

/** The longest note an administrator may keep on a submission (the one table of limits says). */
export const MAX_NOTES_LENGTH = FIELD_LIMITS.notes

/**
 * The dashboard's changes to forms, pages and submissions, and the reads that only the dashboard
 * needs (redirects have `redirects.ts`). Cached API responses need no call from here: the database's
 * own triggers move the content version on every write, whoever makes it (see migration 003).
 */
export function createContentAdminService(db: Kysely<Database>) {
  const formQuery = () =>
    db.selectFrom('forms').select((eb) => [
      'forms.id',
      'forms.title',
      'forms.description',
      'forms.is_active',
      'forms.created_at',
      eb
        .selectFrom('submissions')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('submissions.form_id', '=', 'forms.id')
        .as('submission_count'),
      eb
        .selectFrom('submissions')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('submissions.form_id', '=', 'forms.id')
        .where('submissions.is_read', '=', 0)
        .as('unread_count'),
    ])

  const toAdminForm = (row: {
    id: string
    title: string
    description: string | null
    is_active: number
    created_at: string
    submission_count: number | string | bigint | null
    unread_count: number | string | bigint | null
  }): AdminForm => ({
    id: row.id,
    title: row.title,
    description: row.description,
    isActive: Number(row.is_active) === 1,
    submissionCount: Number(row.submission_count ?? 0),
    unreadCount: Number(row.unread_count ?? 0),
    createdAt: row.created_at,
  })

  const getForm = async (id: string): Promise<AdminForm> => {
    const row = await formQuery().where('forms.id', '=', id).executeTakeFirst()
    if (!row) throw new NotFoundError(`Form '${id}' not found`)
    return toAdminForm(row)
  }

  return {
    /** Forms in the API's order (oldest first), with their active flag and submission count. */
    listForms: async (options: ListOptions): Promise<PageOf<AdminForm>> => {
      const { total } = await db
        .selectFrom('forms')
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow()
      const rows = await formQuery()
        .orderBy('forms.created_at')
        .orderBy('forms.id')
        .limit(options.pageSize)
        .offset((options.page - 1) * options.pageSize)
        .execute()
      return { items: rows.map(toAdminForm), total: Number(total) }
    },

    getForm,

    /** Switches a form on or off; the API's `active` filter follows at once. */
    setFormActive: async (id: string, active: boolean, actor: Actor = 'cli'): Promise<AdminForm> => {
      await db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('forms')
          .set({ is_active: active ? 1 : 0, updated_at: now() })
          .where('id', '=', id)
          .executeTakeFirst()
        if (result.numUpdatedRows === 0n) throw new NotFoundError(`Form '${id}' not found`)
        await recordAudit(trx, { actor, action: 'form.updated', target: id, detail: { isActive: active } })
      })
      return getForm(id)
    },

    /**
     * Publishes or unpublishes a page. A published page always has `publishedAt` (the first
     * publication is kept when publishing again); an unpublished page has none.
     */
    setPagePublished: (id: string, published: boolean, actor: Actor = 'cli'): Promise<Page> =>
      db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('pages').selectAll().where('id', '=', id).executeTakeFirst()
        if (!row) throw new NotFoundError(`Page '${id}' not found`)
        const timestamp = now()
        const change = {
          is_published: published ? (1 as const) : (0 as const),
          published_at: published ? (row.published_at ?? timestamp) : null,
          updated_at: timestamp,
        }
        await trx.updateTable('pages').set(change).where('id', '=', id).execute()
        await recordAudit(trx, {
          actor,
          action: 'page.updated',
          target: id,
          detail: { isPublished: published },
        })
        return presentPage({ ...row, ...change })
      }),

    /** The form a submission belongs to; a `NotFoundError` when there is no such submission. */
    findSubmissionForm: async (id: string): Promise<{ formId: string }> => {
      const row = await db.selectFrom('submissions').select('form_id').where('id', '=', id).executeTakeFirst()
      if (!row) throw new NotFoundError(`Submission '${id}' not found`)
      return { formId: row.form_id }
    },

    /**
     * Changes the administrators' flags and notes on a submission (the submitted data itself never
     * changes). Blank notes are stored as null. Returns the submission and its form's id.
     */
    updateSubmission: (
      id: string,
      change: { isRead?: boolean; isStarred?: boolean; notes?: string | null },
      actor: Actor = 'cli',
    ): Promise<{ formId: string; submission: Submission }> => {
      const notes = change.notes?.trim() === '' ? null : change.notes
      const problem = typeof notes === 'string' ? textProblem(notes, MAX_NOTES_LENGTH) : null
      if (problem !== null) throw new ValidationError(`Notes ${problem}`)
      return db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('submissions').selectAll().where('id', '=', id).executeTakeFirst()
        if (!row) throw new NotFoundError(`Submission '${id}' not found`)
        const update = {
          ...(change.isRead === undefined ? {} : { is_read: change.isRead ? (1 as const) : (0 as const) }),
          ...(change.isStarred === undefined
            ? {}
            : { is_starred: change.isStarred ? (1 as const) : (0 as const) }),
          ...(notes === undefined ? {} : { notes }),
          updated_at: now(),
        }
        await trx.updateTable('submissions').set(update).where('id', '=', id).execute()
        // Which fields changed, not the notes themselves: they may hold personal data.
        await recordAudit(trx, {
          actor,
          action: 'submission.updated',
          target: id,
          detail: {
            formId: row.form_id,
            ...(change.isRead === undefined ? {} : { isRead: change.isRead }),
            ...(change.isStarred === undefined ? {} : { isStarred: change.isStarred }),
            ...(notes === undefined ? {} : { notesChanged: true }),
          },
        })
        return { formId: row.form_id, submission: presentSubmission({ ...row, ...update }) }
      })
    },
  }
}

export type ContentAdminService = ReturnType<typeof createContentAdminService>
