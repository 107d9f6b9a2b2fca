import type { Kysely, Selectable } from 'kysely'
import type { Form, ListOptions, Page, PageOf, Redirect, Submission } from '../../schemas.js'
import { translateDatabaseError } from '../client.js'
import type { Database, FormsTable, PagesTable, RedirectsTable, SubmissionsTable } from '../tables.js'

export function presentForm(row: Pick<Selectable<FormsTable>, 'id' | 'title' | 'description'>): Form {
  return { id: row.id, title: row.title, description: row.description }
}

export function presentSubmission(row: Selectable<SubmissionsTable>): Submission {
  return {
    id: row.id,
    data: JSON.parse(row.data) as Record<string, unknown>,
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    referrer: row.referrer,
    submittedBy: row.submitted_by,
    isRead: row.is_read === 1,
    isStarred: row.is_starred === 1,
    notes: row.notes,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export function presentPage(row: Selectable<PagesTable>): Page {
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    path: row.path,
    pageType: row.page_type,
    isPublished: row.is_published === 1,
    publishedAt: row.published_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export function presentRedirect(row: Selectable<RedirectsTable>): Redirect {
  return {
    id: row.id,
    fromPath: row.from_path,
    toPath: row.to_path,
    type: row.type,
    isActive: row.is_active === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/** Runs a query, translating driver failures (connection loss) into the project's error types. */
export async function guarded<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query()
  } catch (error) {
    throw translateDatabaseError(error)
  }
}

const offsetOf = ({ page, pageSize }: ListOptions) => (page - 1) * pageSize

/** Read queries behind the four list endpoints. Each filter + order has a matching index. */
export function createContentRepository(db: Kysely<Database>) {
  return {
    listForms: (options: ListOptions & { active?: boolean }): Promise<PageOf<Form>> =>
      guarded(async () => {
        let query = db.selectFrom('forms')
        if (options.active !== undefined) query = query.where('is_active', '=', options.active ? 1 : 0)
        const [{ total }] = await query.select((eb) => eb.fn.countAll<number>().as('total')).execute()
        const rows = await query
          .select(['id', 'title', 'description'])
          .orderBy('created_at', 'asc')
          .orderBy('id', 'asc')
          .limit(options.pageSize)
          .offset(offsetOf(options))
          .execute()
        return { items: rows.map(presentForm), total: Number(total) }
      }),

    formExists: (id: string): Promise<boolean> =>
      guarded(
        async () =>
          (await db.selectFrom('forms').select('id').where('id', '=', id).executeTakeFirst()) !== undefined,
      ),

    listSubmissionsForForm: (formId: string, options: ListOptions): Promise<PageOf<Submission>> =>
      guarded(async () => {
        const query = db.selectFrom('submissions').where('form_id', '=', formId)
        const [{ total }] = await query.select((eb) => eb.fn.countAll<number>().as('total')).execute()
        const rows = await query
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(options.pageSize)
          .offset(offsetOf(options))
          .execute()
        return { items: rows.map(presentSubmission), total: Number(total) }
      }),

    listPages: (options: ListOptions & { published?: boolean }): Promise<PageOf<Page>> =>
      guarded(async () => {
        let query = db.selectFrom('pages')
        if (options.published !== undefined)
          query = query.where('is_published', '=', options.published ? 1 : 0)
        const [{ total }] = await query.select((eb) => eb.fn.countAll<number>().as('total')).execute()
        const rows = await query
          .selectAll()
          .orderBy('created_at', 'asc')
          .orderBy('id', 'asc')
          .limit(options.pageSize)
          .offset(offsetOf(options))
          .execute()
        return { items: rows.map(presentPage), total: Number(total) }
      }),

    listRedirects: (options: ListOptions & { active?: boolean }): Promise<PageOf<Redirect>> =>
      guarded(async () => {
        let query = db.selectFrom('redirects')
        if (options.active !== undefined) query = query.where('is_active', '=', options.active ? 1 : 0)
        const [{ total }] = await query.select((eb) => eb.fn.countAll<number>().as('total')).execute()
        const rows = await query
          .selectAll()
          .orderBy('created_at', 'asc')
          .orderBy('id', 'asc')
          .limit(options.pageSize)
          .offset(offsetOf(options))
          .execute()
        return { items: rows.map(presentRedirect), total: Number(total) }
      }),
  }
}

export type ContentRepository = ReturnType<typeof createContentRepository>
