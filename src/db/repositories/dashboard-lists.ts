import {
  type Expression,
  type Kysely,
  type Selectable,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from 'kysely'
import type { AuditLogTable, Database, FormsTable, PagesTable, RedirectsTable } from '../tables.js'

/**
 * The SQL of the dashboard's searchable lists (forms, pages, redirects, the audit log): each
 * list's filters, orders and search as queries, and one numbered page of any of them. Which
 * filters and orders a list offers, and what a page shows, is the service's
 * (`services/dashboard-lists.ts`).
 */

type Column<T extends keyof Database> = `${T}.${string & keyof Database[T]}`

/** An order as columns and directions; `id` always comes last, so that the order is total. */
type Order<T extends keyof Database> = readonly (readonly [Column<T>, 'asc' | 'desc'])[]

const FORM_ORDERS = {
  oldest: [['forms.created_at', 'asc']],
  newest: [['forms.created_at', 'desc']],
  title: [['forms.title', 'asc']],
  updated: [['forms.updated_at', 'desc']],
} as const satisfies Record<string, Order<'forms'>>

const REDIRECT_ORDERS = {
  oldest: [['redirects.created_at', 'asc']],
  newest: [['redirects.created_at', 'desc']],
  from: [['redirects.from_path', 'asc']],
  to: [['redirects.to_path', 'asc']],
} as const satisfies Record<string, Order<'redirects'>>

const PAGE_ORDERS = {
  oldest: [['pages.created_at', 'asc']],
  newest: [['pages.created_at', 'desc']],
  title: [['pages.title', 'asc']],
  path: [['pages.path', 'asc']],
  updated: [['pages.updated_at', 'desc']],
} as const satisfies Record<string, Order<'pages'>>

// Entries are numbered as they are written, so the id alone is the order of time (and an index).
const AUDIT_ORDERS = {
  newest: [['audit_log.id', 'desc']],
  oldest: [['audit_log.id', 'asc']],
} as const satisfies Record<string, Order<'audit_log'>>

/** Which rows of a numbered page to read, given the view's total (see `services/listing.ts`). */
export type PageWindowOf = (total: number) => { reverse: boolean; offset: number; limit: number }

/** One numbered page's rows, and how many rows the view holds in all. */
export interface ListRows<Row> {
  rows: Row[]
  total: number
}

/**
 * Whether any of `columns` holds `pattern` (a LIKE pattern escaped with `\`), ignoring case. Both
 * sides go through `lower()`, so the match is the same on both dialects (ASCII letters fold;
 * SQLite's `lower()`, and PostgreSQL's under the byte-order "C" collation, leave other letters as
 * they are).
 */
function containsText(columns: readonly string[], pattern: string): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.join(
    columns.map((column) => sql`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`),
    sql` or `,
  )})`
}

/**
 * One numbered page of a query, with the view's total. The page's ids are chosen first, from the
 * indexes alone where the order has one (a deep page of 100,000 redirects skips index entries, not
 * rows) and from whichever end of the order is nearer (`window`), and only those rows are read:
 * a "deferred join", which keeps numbered pages and a jump to any of them without the cost that
 * makes plain OFFSET paging slow.
 */
async function numberedPage<T extends 'forms' | 'pages' | 'redirects' | 'audit_log', Row>(
  db: Kysely<Database>,
  table: T,
  scoped: <O>(query: SelectQueryBuilder<Database, T, O>) => SelectQueryBuilder<Database, T, O>,
  order: Order<T>,
  windowOf: PageWindowOf,
): Promise<ListRows<Row>> {
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
  const window = windowOf(Number(count.total))
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
  return { rows, total: Number(count.total) }
}

/** A list's view in SQL terms: its filter, its order, and a search as a LIKE pattern ('' for none). */
interface ListQuery<F extends string, S extends string> {
  filter: F
  sort: S
  pattern: string
}

/**
 * Forms whose title or description matches; `unread` keeps the forms that have unread submissions
 * (found by migration 013's index of the read flag).
 */
export function formsListPage(
  db: Kysely<Database>,
  view: ListQuery<'all' | 'active' | 'inactive' | 'unread', keyof typeof FORM_ORDERS>,
  windowOf: PageWindowOf,
): Promise<ListRows<Selectable<FormsTable>>> {
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
      if (view.pattern !== '')
        out = out.where(containsText(['forms.title', 'forms.description'], view.pattern))
      return out
    },
    FORM_ORDERS[view.sort],
    windowOf,
  )
}

/** Redirects whose from or to path matches, active, inactive or all. */
export function redirectsListPage(
  db: Kysely<Database>,
  view: ListQuery<'all' | 'active' | 'inactive', keyof typeof REDIRECT_ORDERS>,
  windowOf: PageWindowOf,
): Promise<ListRows<Selectable<RedirectsTable>>> {
  return numberedPage(
    db,
    'redirects',
    (query) => {
      let out = query
      if (view.filter !== 'all') out = out.where('redirects.is_active', '=', view.filter === 'active' ? 1 : 0)
      if (view.pattern !== '')
        out = out.where(containsText(['redirects.from_path', 'redirects.to_path'], view.pattern))
      return out
    },
    REDIRECT_ORDERS[view.sort],
    windowOf,
  )
}

/** Pages whose title, slug or path matches, published, drafts or all. */
export function pagesListPage(
  db: Kysely<Database>,
  view: ListQuery<'all' | 'published' | 'draft', keyof typeof PAGE_ORDERS>,
  windowOf: PageWindowOf,
): Promise<ListRows<Selectable<PagesTable>>> {
  return numberedPage(
    db,
    'pages',
    (query) => {
      let out = query
      if (view.filter !== 'all')
        out = out.where('pages.is_published', '=', view.filter === 'published' ? 1 : 0)
      if (view.pattern !== '')
        out = out.where(containsText(['pages.title', 'pages.slug', 'pages.path'], view.pattern))
      return out
    },
    PAGE_ORDERS[view.sort],
    windowOf,
  )
}

/** Audit entries of one action (`filter`, or 'all') whose actor, target or detail matches. */
export function auditListPage(
  db: Kysely<Database>,
  view: ListQuery<string, keyof typeof AUDIT_ORDERS>,
  windowOf: PageWindowOf,
): Promise<ListRows<Selectable<AuditLogTable>>> {
  return numberedPage(
    db,
    'audit_log',
    (query) => {
      let out = query
      if (view.filter !== 'all') out = out.where('audit_log.action', '=', view.filter)
      if (view.pattern !== '')
        out = out.where(
          containsText(['audit_log.actor', 'audit_log.target', 'audit_log.detail'], view.pattern),
        )
      return out
    },
    AUDIT_ORDERS[view.sort],
    windowOf,
  )
}
