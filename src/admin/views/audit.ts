import { html, type SafeHtml, url } from '../../html.js'
import type { PageOf } from '../../schemas.js'
import { AUDIT_ACTIONS, type AuditEntry } from '../../services/audit.js'
import type { AuditFilter, AuditSort } from '../../services/dashboard-lists.js'
import type { ListView } from '../../services/listing.js'
import type { AdminSession } from '../../services/sessions.js'
import {
  isNarrowed,
  type ListSpec,
  listHeader,
  listHref,
  NEWEST_FIRST,
  OLDEST_FIRST,
  PAGE_SIZES,
} from '../list-view.js'
import { emptyState, pagination, table, timestamp } from './components.js'
import { layout } from './layout.js'

/** How many items of a list (the ids of a bulk change) an entry shows; the rest are counted. */
const LISTED = 3

/** A value of an entry's detail as text; a long list shows its first items and how many in all. */
function detailValue(value: unknown): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.length > LISTED)
    return `${value.slice(0, LISTED).map(detailValue).join(', ')}, … (${value.length} in all)`
  if (Array.isArray(value)) return value.map(detailValue).join(', ')
  return JSON.stringify(value)
}

/** An entry's detail as short `name: value` pairs; values are data, escaped like any other. */
function detailText(detail: AuditEntry['detail']): SafeHtml {
  if (detail === null) return html`<span class="muted">—</span>`
  const pairs = Object.entries(detail).map(
    ([name, value]) => html`<li><span class="muted">${name}:</span> ${detailValue(value)}</li>`,
  )
  return html`<ul class="plain audit-detail">${pairs}</ul>`
}

/** Audit entries as a table, newest first: the audit log's body, and the overview's recent activity. */
export function auditTable(entries: readonly AuditEntry[], caption: string): SafeHtml {
  return table({
    caption,
    columns: ['When', 'Who', 'Action', 'Target', 'Detail'],
    rowIds: entries.map((entry) => `audit-${entry.id}`),
    rows: entries.map((entry) => [
      timestamp(entry.at),
      entry.actor === 'cli' ? html`<span class="badge neutral">Command line</span>` : entry.actor,
      html`<code>${entry.action}</code>`,
      html`<code>${entry.target}</code>`,
      detailText(entry.detail),
    ]),
  })
}

/** The audit log's search, filter (one action) and orders. */
export const AUDIT_LIST: ListSpec<AuditFilter, AuditSort> = {
  base: url`/admin/audit`,
  filters: [
    { value: 'all', label: 'Any action' },
    ...AUDIT_ACTIONS.map((action) => ({ value: action, label: action })),
  ],
  sorts: [NEWEST_FIRST, OLDEST_FIRST],
  sizes: PAGE_SIZES,
  searchHint: 'Who, target or detail',
  filterLabel: 'Action',
  noun: ['entry', 'entries'],
}

/** Organization → Audit log: who did what, newest first, searched and filtered by action. */
export function auditPage(input: {
  session: AdminSession
  view: ListView<AuditFilter, AuditSort>
  entries: PageOf<AuditEntry>
  searchProblem?: string | undefined
}): SafeHtml {
  const { session, view, entries } = input
  const narrowed = isNarrowed(AUDIT_LIST, view)
  const body =
    entries.total === 0
      ? emptyState(
          narrowed ? 'No entries match' : 'Nothing recorded yet',
          narrowed
            ? 'No change matches this search and action. Clear them to see every entry.'
            : 'Every change to keys, users and content, and every sign-in, is recorded here as it happens.',
        )
      : auditTable(
          entries.items,
          view.sort === 'newest' ? 'Audit log, newest first' : 'Audit log, oldest first',
        )
  return layout({
    title: 'Audit log',
    session,
    section: 'audit',
    body: html`<div class="page-head"><h1>Audit log</h1></div>
<p class="lead">Who did what: changes made in the dashboard (by the signed-in user) and on the
command line (<code>cli</code>), and every sign-in. Keys and passwords are never recorded.</p>
${listHeader(AUDIT_LIST, view, entries.total, input.searchProblem)}
${body}
${pagination({ page: view.page, pageSize: view.size, total: entries.total, href: (page) => listHref(AUDIT_LIST, view, page) })}`,
  })
}
