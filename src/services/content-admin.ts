import type { Kysely, Selectable } from 'kysely'
import { UniqueViolationError } from '../db/errors.js'
import { presentPage, presentSubmission } from '../db/repositories/content.js'
import { type Database, type FormsTable, SUBMISSION_COLUMNS } from '../db/tables.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { newId } from '../ids.js'
import { FIELD_LIMITS, textProblem } from '../limits.js'
import type { Page, Submission } from '../schemas.js'
import { now } from '../time.js'
import { type Actor, recordAudit } from './audit.js'
import { createFormCounts, type FormCounts } from './form-counts.js'
import type { JsonObject } from './import/json.js'
import type { FieldProblem } from './import/locations.js'
import { readForm, readPage } from './import/records.js'

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

/** A form's row and its counts as the dashboard shows the form. */
export function toAdminForm(
  row: Pick<Selectable<FormsTable>, 'id' | 'title' | 'description' | 'is_active' | 'created_at'>,
  counts: FormCounts = { total: 0, unread: 0 },
): AdminForm {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    isActive: Number(row.is_active) === 1,
    submissionCount: counts.total,
    unreadCount: counts.unread,
    createdAt: row.created_at,
  }
}

/** The longest note an administrator may keep on a submission (the one table of limits says). */
export const MAX_NOTES_LENGTH = FIELD_LIMITS.notes

/** A form as the dashboard's editor sends it; text as typed. */
export interface FormInput {
  title: string
  /** Blank means none. */
  description: string
  isActive: boolean
}

/** A page as the dashboard's editor sends it; text as typed. */
export interface PageInput {
  title: string
  slug: string
  path: string
  /** Blank means the default, `page`. */
  pageType: string
  isPublished: boolean
}

/** The fields of a form the editor shows, in its order, with the names its problems start with. */
export const FORM_FIELD_LABELS = { title: 'Title', description: 'Description' } as const
/** The fields of a page the editor shows, in its order, with the names its problems start with. */
export const PAGE_FIELD_LABELS = { title: 'Title', slug: 'Slug', path: 'Path', pageType: 'Type' } as const

export type FormField = keyof typeof FORM_FIELD_LABELS
export type PageField = keyof typeof PAGE_FIELD_LABELS

/**
 * A form or page that cannot be saved as given. `fields` holds one sentence per field that is wrong
 * (`Title must not be empty`), so that the dashboard can say it beside the field; `problems` lists
 * the same sentences in the editor's order, for the summary above it.
 */
export class FieldValidationError<F extends string = string> extends ValidationError {
  constructor(readonly fields: Partial<Record<F, string>>) {
    const problems = Object.values<string | undefined>(fields).filter((text) => text !== undefined)
    super(problems.join('; '), problems)
    this.name = 'FieldValidationError'
  }
}

/** What a saved change changed: the fields (by API name) whose values differ, none for a save of the same values. */
export interface Saved<T> {
  item: T
  changed: string[]
}

/**
 * The importer's problems of one record as sentences per editor field, in the editor's order. A
 * field the editor does not show cannot be wrong (the editor sends every field the reader asks
 * for), so anything else is a programming error and is not hidden.
 */
function byField<F extends string>(
  problems: FieldProblem[],
  labels: Record<F, string>,
): Partial<Record<F, string>> {
  const fields: Partial<Record<F, string>> = {}
  for (const name of Object.keys(labels) as F[]) {
    const problem = problems.find((item) => item.field === name)
    if (problem) fields[name] = `${labels[name]} ${problem.message}`
  }
  const other = problems.find((item) => item.field === undefined || !(item.field in labels))
  if (other)
    throw new Error(`the editor sent a record the importer refuses: ${other.field ?? ''} ${other.message}`)
  return fields
}

/**
 * A form as the importer would read it (the same limits and checks, `readForm`), surrounding
 * whitespace trimmed; or a `FieldValidationError`.
 */
function checkForm(input: FormInput): { title: string; description: string | null; isActive: boolean } {
  const description = input.description.trim()
  const { draft, problems } = readForm({
    title: input.title.trim(),
    description: description === '' ? null : description,
    isActive: input.isActive,
  })
  const fields = byField(problems, FORM_FIELD_LABELS)
  if (Object.keys(fields).length > 0) throw new FieldValidationError(fields)
  return { title: draft.title, description: draft.description, isActive: draft.isActive }
}

/**
 * A page as the importer would read it (`readPage`: the same limits, and a path that starts with
 * `/`), surrounding whitespace trimmed; or a `FieldValidationError`. The path's uniqueness needs
 * the database: the write checks it.
 */
function checkPage(input: PageInput): {
  title: string
  slug: string
  path: string
  pageType: string
  isPublished: boolean
} {
  const record: JsonObject = {
    title: input.title.trim(),
    slug: input.slug.trim(),
    path: input.path.trim(),
    isPublished: input.isPublished,
  }
  const pageType = input.pageType.trim()
  if (pageType !== '') record.pageType = pageType
  const { draft, problems } = readPage(record)
  const fields = byField(problems, PAGE_FIELD_LABELS)
  if (Object.keys(fields).length > 0) throw new FieldValidationError(fields)
  return {
    title: draft.title,
    slug: draft.slug,
    path: draft.path,
    pageType: draft.pageType,
    isPublished: draft.isPublished,
  }
}

/** The fields of `next` whose values differ from `current`'s, as `{ name: new value }` and `{ name: old value }`. */
function differences<T extends Record<string, unknown>>(current: T, next: T) {
  const changed: string[] = []
  const after: Record<string, unknown> = {}
  const before: Record<string, unknown> = {}
  for (const name of Object.keys(next)) {
    if (current[name] === next[name]) continue
    changed.push(name)
    after[name] = next[name]
    before[name] = current[name]
  }
  return { changed, after, before }
}

const flag = (on: boolean) => (on ? (1 as const) : (0 as const))

/**
 * The dashboard's changes to forms, pages and submissions, and the reads that only the dashboard
 * needs (redirects have `redirects/`). Forms and pages are checked by the importer's own record
 * readers, so a title the dashboard takes is one an import takes, and the other way round. Every
 * change and its audit entry are one transaction: neither is kept without the other. Cached API
 * responses need no call from here: the database's own triggers move the content version on every
 * write, whoever makes it (see migration 003).
 */
export function createContentAdminService(db: Kysely<Database>) {
  const formCounts = createFormCounts(db)

  const getForm = async (id: string): Promise<AdminForm> => {
    const row = await db.selectFrom('forms').selectAll().where('id', '=', id).executeTakeFirst()
    if (!row) throw new NotFoundError(`Form '${id}' not found`)
    return toAdminForm(row, (await formCounts([id])).get(id))
  }

  const getPage = async (id: string): Promise<Page> => {
    const row = await db.selectFrom('pages').selectAll().where('id', '=', id).executeTakeFirst()
    if (!row) throw new NotFoundError(`Page '${id}' not found`)
    return presentPage(row)
  }

  /** How many rows come before `id` in its list's order (createdAt, then id), as the lists page them. */
  const positionOf = async (table: 'forms' | 'pages', id: string): Promise<number> => {
    const row = await db.selectFrom(table).select('created_at').where('id', '=', id).executeTakeFirst()
    if (!row) return 0
    const { before } = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('before'))
      // A row-value comparison: one range of the (created_at, id) index that orders the list.
      .where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(row.created_at, id)))
      .executeTakeFirstOrThrow()
    return Number(before)
  }

  /**
   * Runs a write of a page whose path is `path`. The unique index on `pages.path` decides, so two
   * pages saved at once cannot both take a path; the loser hears which page has it.
   */
  const writingPage = async <T>(path: string, write: () => Promise<T>): Promise<T> => {
    try {
      return await write()
    } catch (error) {
      if (!(error instanceof UniqueViolationError)) throw error
      const holder = await db.selectFrom('pages').select('title').where('path', '=', path).executeTakeFirst()
      throw new FieldValidationError<PageField>({
        path: holder
          ? `Path ${path} is already the path of the page “${holder.title}”`
          : `Path ${path} was taken by another change meanwhile; please try again`,
      })
    }
  }

  return {
    getForm,

    getPage,

    /** Where a form sits in the list of forms (0 for the first): the list page to show it on. */
    formPosition: (id: string) => positionOf('forms', id),

    /** Where a page sits in the list of pages (0 for the first): the list page to show it on. */
    pagePosition: (id: string) => positionOf('pages', id),

    /** Creates a form; a `FieldValidationError` says what is wrong with which field. */
    createForm: async (input: FormInput, actor: Actor = 'cli'): Promise<AdminForm> => {
      const value = checkForm(input)
      const timestamp = now()
      const id = newId('form')
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('forms')
          .values({
            id,
            title: value.title,
            description: value.description,
            is_active: flag(value.isActive),
            created_at: timestamp,
            updated_at: timestamp,
          })
          .execute()
        await recordAudit(trx, { actor, action: 'form.created', target: id, detail: value })
      })
      return getForm(id)
    },

    /**
     * Replaces a form's title, description and active flag, under the rules of creating one. A save
     * that changes nothing writes nothing (and so records nothing, and leaves caches warm).
     */
    updateForm: async (id: string, input: FormInput, actor: Actor = 'cli'): Promise<Saved<AdminForm>> => {
      const value = checkForm(input)
      const changed = await db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('forms').selectAll().where('id', '=', id).executeTakeFirst()
        if (!row) throw new NotFoundError(`Form '${id}' not found`)
        const current = { title: row.title, description: row.description, isActive: row.is_active === 1 }
        const { changed, after, before } = differences(current, value)
        if (changed.length === 0) return changed
        await trx
          .updateTable('forms')
          .set({
            title: value.title,
            description: value.description,
            is_active: flag(value.isActive),
            updated_at: now(),
          })
          .where('id', '=', id)
          .execute()
        await recordAudit(trx, {
          actor,
          action: 'form.updated',
          target: id,
          detail: { ...after, previous: before },
        })
        return changed
      })
      return { item: await getForm(id), changed }
    },

    /**
     * Deletes a form and, through the foreign key's cascade, every submission to it. Returns the
     * form as it was and how many submissions went with it (the audit entry records both).
     */
    deleteForm: (
      id: string,
      actor: Actor = 'cli',
    ): Promise<{ form: AdminForm; deletedSubmissions: number }> =>
      db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('forms').selectAll().where('id', '=', id).executeTakeFirst()
        if (!row) throw new NotFoundError(`Form '${id}' not found`)
        const { count } = await trx
          .selectFrom('submissions')
          .select((eb) => eb.fn.countAll<number | string>().as('count'))
          .where('form_id', '=', id)
          .executeTakeFirstOrThrow()
        const deletedSubmissions = Number(count)
        await trx.deleteFrom('forms').where('id', '=', id).execute()
        await recordAudit(trx, {
          actor,
          action: 'form.deleted',
          target: id,
          detail: { title: row.title, deletedSubmissions },
        })
        return { form: toAdminForm(row, { total: deletedSubmissions, unread: 0 }), deletedSubmissions }
      }),

    /**
     * Creates a page; a `FieldValidationError` says what is wrong with which field, a path another
     * page has included. A published page gets `publishedAt` now.
     */
    createPage: (input: PageInput, actor: Actor = 'cli'): Promise<Page> => {
      const value = checkPage(input)
      const timestamp = now()
      const row = {
        id: newId('page'),
        title: value.title,
        slug: value.slug,
        path: value.path,
        page_type: value.pageType,
        is_published: flag(value.isPublished),
        published_at: value.isPublished ? timestamp : null,
        created_at: timestamp,
        updated_at: timestamp,
      }
      return writingPage(value.path, () =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto('pages').values(row).execute()
          await recordAudit(trx, { actor, action: 'page.created', target: row.id, detail: value })
          return presentPage(row)
        }),
      )
    },

    /**
     * Replaces a page's fields, under the rules of creating one. `publishedAt` follows
     * `setPagePublished`: set on the first publication, kept when published again, cleared when
     * unpublished. A save that changes nothing writes nothing.
     */
    updatePage: (id: string, input: PageInput, actor: Actor = 'cli'): Promise<Saved<Page>> => {
      const value = checkPage(input)
      return writingPage(value.path, () =>
        db.transaction().execute(async (trx) => {
          const row = await trx.selectFrom('pages').selectAll().where('id', '=', id).executeTakeFirst()
          if (!row) throw new NotFoundError(`Page '${id}' not found`)
          const current = presentPage(row)
          const { changed, after, before } = differences(
            {
              title: current.title,
              slug: current.slug,
              path: current.path,
              pageType: current.pageType,
              isPublished: current.isPublished,
            },
            value,
          )
          if (changed.length === 0) return { item: current, changed }
          const timestamp = now()
          const change = {
            title: value.title,
            slug: value.slug,
            path: value.path,
            page_type: value.pageType,
            is_published: flag(value.isPublished),
            published_at: value.isPublished ? (row.published_at ?? timestamp) : null,
            updated_at: timestamp,
          }
          await trx.updateTable('pages').set(change).where('id', '=', id).execute()
          await recordAudit(trx, {
            actor,
            action: 'page.updated',
            target: id,
            detail: { ...after, previous: before },
          })
          return { item: presentPage({ ...row, ...change }), changed }
        }),
      )
    },

    /** Deletes a page; returns it as it was. */
    deletePage: (id: string, actor: Actor = 'cli'): Promise<Page> =>
      db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('pages').selectAll().where('id', '=', id).executeTakeFirst()
        if (!row) throw new NotFoundError(`Page '${id}' not found`)
        await trx.deleteFrom('pages').where('id', '=', id).execute()
        await recordAudit(trx, {
          actor,
          action: 'page.deleted',
          target: id,
          detail: { title: row.title, path: row.path },
        })
        return presentPage(row)
      }),

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
        const row = await trx
          .selectFrom('submissions')
          .select(SUBMISSION_COLUMNS)
          .where('id', '=', id)
          .executeTakeFirst()
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
