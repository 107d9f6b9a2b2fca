import type { Kysely, Selectable } from 'kysely'
import {
  auditListPage,
  formsListPage,
  type PageWindowOf,
  pagesListPage,
  redirectsListPage,
} from '../db/repositories/dashboard-lists.js'
import type { Database, FormsTable } from '../db/tables.js'
import { type Page, presentPage } from '../resources/page.js'
import { presentRedirect, type Redirect } from '../resources/redirect.js'
import type { PageOf } from '../schemas.js'
import { AUDIT_ACTIONS, type AuditEntry, toAuditEntry } from './audit.js'
import { type AdminForm, toAdminForm } from './content-admin.js'
import { createFormCounts } from './form-counts.js'
import type { ApiKeyView } from './keys.js'
import { byText, checkSearch, containsPattern, type ListView, pageWindow, viewInMemory } from './listing.js'
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

/**
 * Which rows a numbered page reads: from whichever end of the order is nearer (`pageWindow`), so a
 * deep page of a long list skips at most half of it.
 */
const windowOf =
  (view: ListView): PageWindowOf =>
  (total) =>
    pageWindow(view, total)

/** A view's search as the list queries take it: a LIKE pattern, '' for none. */
const patternOf = (view: ListView): string => {
  const search = checkSearch(view.search)
  return search === '' ? '' : containsPattern(search)
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
     * `unread` keeps the forms that have unread submissions.
     */
    async forms(view: ListView<FormFilter, FormSort>): Promise<PageOf<AdminForm>> {
      const pattern = patternOf(view)
      const { rows, total } = await formsListPage(db, { ...view, pattern }, windowOf(view))
      return { items: await withCounts(rows), total }
    },

    /** Redirects whose from or to path holds the search, active or not, in the view's order. */
    async redirects(view: ListView<RedirectFilter, RedirectSort>): Promise<PageOf<Redirect>> {
      const pattern = patternOf(view)
      const { rows, total } = await redirectsListPage(db, { ...view, pattern }, windowOf(view))
      return { items: rows.map(presentRedirect), total }
    },

    /** Pages whose title, slug or path holds the search, published or drafts, in the view's order. */
    async pages(view: ListView<PageFilter, PageSort>): Promise<PageOf<Page>> {
      const pattern = patternOf(view)
      const { rows, total } = await pagesListPage(db, { ...view, pattern }, windowOf(view))
      return { items: rows.map(presentPage), total }
    },

    /**
     * Audit entries of one action (or all), whose actor, target or detail holds the search, newest
     * or oldest first.
     */
    async audit(view: ListView<AuditFilter, AuditSort>): Promise<PageOf<AuditEntry>> {
      const pattern = patternOf(view)
      const { rows, total } = await auditListPage(db, { ...view, pattern }, windowOf(view))
      return { items: rows.map(toAuditEntry), total }
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
