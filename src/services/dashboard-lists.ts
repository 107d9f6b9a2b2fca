import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely'
import type { AuditLogTable, Database, FormsTable, PagesTable, RedirectsTable } from '../db/tables.js'
import { type Page, presentPage } from '../resources/page.js'
import { presentRedirect, type Redirect } from '../resources/redirect.js'
import type { PageOf } from '../schemas.js'
import { AUDIT_ACTIONS, type AuditEntry, toAuditEntry } from './audit.js'
import { type AdminForm, toAdminForm } from './content-admin.js'
import { createFormCounts } from './form-counts.js'
import type { ApiKeyView } from './keys.js'
import { byText, checkSearch, containsText, type ListView, pageWindow, viewInMemory } from './listing.js'
import type { UserView } from './users.js'

/** The filters and orders of each dashboard list; the first of each is its default. */
export const FORM_FILTERS = ['all', 'active', 'inactive', 'unread'] as const
export const FORM_SORTS = ['oldest', 'newest', 'title', 'updated'] as const
export const REDIRECT_FILTERS = ['all', 'active', 'inactive'] as const
export const REDIRECT_SORTS = ['oldest', 'newest', 'from', 'to'] as const
export const PAGE_FILTERS = ['all', 'published', 'draft'] as const
export const PAGE_SORTS = ['oldest', 'newest', 'title', 'path', 'updated'] as const
export const USER_FILTERS = ['all', 'active', 'disabled', 'global_admin', 'editor', 'viewer'] as const
export const USER_SORTS = ['email', 'newest', 'oldest', 'role'] as const
export const KEY_FILTERS = ['all', 'active', 'inactive', 'expired', 'revoked'] as const
export const KEY_SORTS = ['newest', 'oldest', 'name', 'last-used'] as const
/** The audit log is filtered by one action at a time. */
export const AUDIT_FILTERS = ['all', ...AUDIT_ACTIONS] as const
export const AUDIT_SORTS = ['newest', 'oldest'] as const

export type FormFilter = (typeof FORM_FILTERS)[number]
export type FormSort = (typeof FORM_SORTS)[number]
export type RedirectFilter = (typeof REDIRECT_FILTERS)[number]
export type RedirectSort = (typeof REDIRECT_SORTS)[number]
export type PageFilter = (typeof PAGE_FILTERS)[number]
export type PageSort = (typeof PAGE_SORTS)[number]
export type UserFilter = (typeof USER_FILTERS)[number]
export type UserSort = (typeof USER_SORTS)[number]
export type KeyFilter = (typeof KEY_FILTERS)[number]
export type KeySort = (typeof KEY_SORTS)[number]
export type AuditFilter = (typeof AUDIT_FILTERS)[number]
export type AuditSort = (typeof AUDIT_SORTS)[number]

type Column<T extends keyof Database> = `${T}.${string & keyof Database[T]}`

/** An order as columns and directions; `id` always comes last, so that the order is total. */
type Order<T extends keyof Database> = readonly (readonly [Column<T>, 'asc' | 'desc'])[]

const FORM_ORDERS: Record<FormSort, Order<'forms'>> = {
  oldest: [['forms.created_at', 'asc']],
  newest: [['forms.created_at', 'desc']],
  title: [['forms.title', 'asc']],
  updated: [['forms.updated_at', 'desc']],
}

const REDIRECT_ORDERS: Record<RedirectSort, Order<'redirects'>> = {
  oldest: [['redirects.created_at', 'asc']],
  newest: [['redirects.created_at', 'desc']],
  from: [['redirects.from_path', 'asc']],
  to: [['redirects.to_path', 'asc']],
}

const PAGE_ORDERS: Record<PageSort, Order<'pages'>> = {
  oldest: [['pages.created_at', 'asc']],
  newest: [['pages.created_at', 'desc']],
  title: [['pages.title', 'asc']],
  path: [['pages.path', 'asc']],
  updated: [['pages.updated_at', 'desc']],
}

// Entries are numbered as they are written, so the id alone is the order of time (and an index).
const AUDIT_ORDERS: Record<AuditSort, Order<'audit_log'>> = {
  newest: [['audit_log.id', 'desc']],
  oldest: [['audit_log.id', 'asc']],
}

/**
 * One numbered page of a query, with the view's total. The page's ids are chosen first, from the
 * indexes alone where the order has one (a deep page of 100,000 redirects skips index entries, not
 * rows) and from whichever end of the order is nearer (`pageWindow`), and only those rows are read:
 * a "deferred join", which keeps numbered pages and a jump to any of them without the cost that
 * makes plain OFFSET paging slow.
 */
async function numberedPage<T extends 'forms' | 'pages' | 'redirects' | 'audit_log', Row, Item>(
  db: Kysely<Database>,
  table: T,
  scoped: <O>(query: SelectQueryBuilder<Database, T, O>) => SelectQueryBuilder<Database, T, O>,
  order: Order<T>,
  view: ListView,
  present: (rows: Row[]) => Item[] | Promise<Item[]>,
): Promise<PageOf<Item>> {
  // Kysely cannot follow a table name that is a type parameter through its builders; the casts
  // below only restate `T` for it, and every column named is checked against `Column<T>`.
  type Query<O> = SelectQueryBuilder<Database, T, O>
  const from = () => db.selectFrom(table as 'redirects') as unknown as Query<object>
  const ordered = <O>(query: Query<O>, reverse = false): Query<O> => {
    const flip = (direction: 'asc' | 'desc') => (reverse === (direction === 'asc') ? 'desc' : 'asc')
    let out = query
    for (const [column, direction] of order) out = out.orderBy(column as never, flip(direction))
    const last = order.at(-1)
    return last?.[0] === `${table}.id` ? out : out.orderBy(`${table}.id` as never, flip(last?.[1] ?? 'asc'))
  }
  const count = await scoped(from())
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('total'))
    .executeTakeFirstOrThrow()
  const window = pageWindow(view, Number(count.total))
  const ids =
    window.limit === 0
      ? []
      : ((await ordered(scoped(from()).select(`${table}.id` as never), window.reverse)
          .limit(window.limit)
          .offset(window.offset)
          .execute()) as { id: string }[])
  const wanted = ids.map((row) => row.id)
  const rows =
    wanted.length === 0
      ? []
      : ((await ordered(from().selectAll())
          .where(`${table}.id` as never, 'in', wanted as never)
          .execute()) as Row[])
  return { items: await present(rows), total: Number(count.total) }
}

/**
 * The dashboard's lists as views: search, filter, order and numbered pages (the API's own lists
 * keep the API's fixed orders and filters; see the content repository). Searches are checked
 * (`checkSearch`) and reach the database as parameters only.
 */
export function createDashboardLists(db: Kysely<Database>) {
  const formCounts = createFormCounts(db)

  /** A page of forms with their submission counts. */
  const withCounts = async (rows: Selectable<FormsTable>[]): Promise<AdminForm[]> => {
    const counts = await formCounts(rows.map((row) => row.id))
    return rows.map((row) => toAdminForm(row, counts.get(row.id)))
  }

  return {
    /**
     * Forms whose title or description holds the search, with their submission and unread counts;
     * `unread` keeps the forms that have unread submissions (found by migration 013's index of the read flag).
     */
    forms(view: ListView<FormFilter, FormSort>): Promise<PageOf<AdminForm>> {
      const search = checkSearch(view.search)
      return numberedPage(
        db,
        'forms',
        (query) => {
          let out = query
          if (view.filter === 'active' || view.filter === 'inactive')
            out = out.where('forms.is_active', '=', view.filter === 'active' ? 1 : 0)
          if (view.filter === 'unread')
            out = out.where(({ exists, selectFrom }) =>
              exists(
                selectFrom('submissions')
                  .select('submissions.id')
                  .whereRef('submissions.form_id', '=', 'forms.id')
                  .where('submissions.is_read', '=', 0),
              ),
            )
          if (search !== '') out = out.where(containsText(['forms.title', 'forms.description'], search))
          return out
        },
        FORM_ORDERS[view.sort],
        view,
        withCounts,
      )
    },

    /** Redirects whose from or to path holds the search, active or not, in the view's order. */
    redirects(view: ListView<RedirectFilter, RedirectSort>): Promise<PageOf<Redirect>> {
      const search = checkSearch(view.search)
      return numberedPage(
        db,
        'redirects',
        (query) => {
          let out = query
          if (view.filter !== 'all')
            out = out.where('redirects.is_active', '=', view.filter === 'active' ? 1 : 0)
          if (search !== '')
            out = out.where(containsText(['redirects.from_path', 'redirects.to_path'], search))
          return out
        },
        REDIRECT_ORDERS[view.sort],
        view,
        (rows: Selectable<RedirectsTable>[]) => rows.map(presentRedirect),
      )
    },

    /** Pages whose title, slug or path holds the search, published or drafts, in the view's order. */
    pages(view: ListView<PageFilter, PageSort>): Promise<PageOf<Page>> {
      const search = checkSearch(view.search)
      return numberedPage(
        db,
        'pages',
        (query) => {
          let out = query
          if (view.filter !== 'all')
            out = out.where('pages.is_published', '=', view.filter === 'published' ? 1 : 0)
          if (search !== '')
            out = out.where(containsText(['pages.title', 'pages.slug', 'pages.path'], search))
          return out
        },
        PAGE_ORDERS[view.sort],
        view,
        (rows: Selectable<PagesTable>[]) => rows.map(presentPage),
      )
    },

    /**
     * Audit entries of one action (or all), whose actor, target or detail holds the search, newest
     * or oldest first.
     */
    audit(view: ListView<AuditFilter, AuditSort>): Promise<PageOf<AuditEntry>> {
      const search = checkSearch(view.search)
      return numberedPage(
        db,
        'audit_log',
        (query) => {
          let out = query
          if (view.filter !== 'all') out = out.where('audit_log.action', '=', view.filter)
          if (search !== '')
            out = out.where(containsText(['audit_log.actor', 'audit_log.target', 'audit_log.detail'], search))
          return out
        },
        AUDIT_ORDERS[view.sort],
        view,
        (rows: Selectable<AuditLogTable>[]) => rows.map(toAuditEntry),
      )
    },
  }
}

/** Users as the dashboard lists them: by email, role or status, searched by email. */
export function viewUsers(
  users: readonly UserView[],
  view: ListView<UserFilter, UserSort>,
): PageOf<UserView> {
  const search = checkSearch(view.search)
  return viewInMemory(
    users,
    { ...view, search },
    {
      searched: (user) => [user.email],
      keep: (user, filter) =>
        filter === 'all' ||
        (filter === 'active' || filter === 'disabled' ? user.status === filter : user.role === filter),
      compare: {
        email: (a, b) => byText(a.email, b.email),
        newest: (a, b) => byText(b.createdAt, a.createdAt) || byText(a.id, b.id),
        oldest: (a, b) => byText(a.createdAt, b.createdAt) || byText(a.id, b.id),
        role: (a, b) => byText(a.role, b.role) || byText(a.email, b.email),
      },
    },
  )
}

/** API keys as the dashboard lists them: by status, searched by name, prefix or creator. */
export function viewKeys(
  keys: readonly ApiKeyView[],
  view: ListView<KeyFilter, KeySort>,
): PageOf<ApiKeyView> {
  const search = checkSearch(view.search)
  return viewInMemory(
    keys,
    { ...view, search },
    {
      searched: (key) => [key.name, key.prefix, key.createdBy],
      // Keys are filtered by what the API makes of them; one refused only for its expiry is expired.
      keep: (key, filter) => {
        if (filter === 'all') return true
        const expired = key.statusReason === 'expired'
        return filter === 'expired' ? expired : key.status === filter && !expired
      },
      compare: {
        newest: (a, b) => byText(b.createdAt, a.createdAt) || byText(a.id, b.id),
        oldest: (a, b) => byText(a.createdAt, b.createdAt) || byText(a.id, b.id),
        name: (a, b) => byText(a.name.toLowerCase(), b.name.toLowerCase()) || byText(a.id, b.id),
        // Never-used keys last; the most recently used first.
        'last-used': (a, b) => byText(b.lastUsedAt ?? '', a.lastUsedAt ?? '') || byText(a.id, b.id),
      },
    },
  )
}
