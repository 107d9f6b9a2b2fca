import type { AuditEntry } from '../../services/audit.js'
import { AUDIT_ACTIONS } from '../../services/audit.js'
import type { AdminSession } from '../../services/sessions.js'
import { html, type SafeHtml, type SafeUrl } from '../html.js'
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

/** Organization → Audit log: who did what, newest first, filtered by action and actor. */
export function auditPage(input: {
  session: AdminSession
  entries: AuditEntry[]
  total: number
  page: number
  pageSize: number
  filter: { action: string; actor: string }
  href: (page: number) => SafeUrl
}): SafeHtml {
  const { session, entries, filter } = input
  const filtered = filter.action !== '' || filter.actor !== ''
  const options = AUDIT_ACTIONS.map(
    (action) =>
      html`<option value="${action}"${action === filter.action ? html` selected` : ''}>${action}</option>`,
  )
  const body =
    entries.length === 0
      ? emptyState(
          filtered ? 'No entries match' : 'Nothing recorded yet',
          filtered
            ? 'No change matches this action and actor. Clear the filter to see every entry.'
            : 'Every change to keys, users and content, and every sign-in, is recorded here as it happens.',
        )
      : auditTable(entries, 'Audit log, newest first')
  return layout({
    title: 'Audit log',
    session,
    section: 'audit',
    body: html`<div class="page-head"><h1>Audit log</h1></div>
<p class="lead">Who did what, newest first: changes made in the dashboard (by the signed-in user) and on the
command line (<code>cli</code>), and every sign-in. Keys and passwords are never recorded.</p>
<form method="get" action="/admin/audit" class="filters" role="search" aria-label="Filter the audit log">
  <div class="field"><label for="filter-action">Action</label>
  <select id="filter-action" name="action"><option value="">Any action</option>${options}</select></div>
  <div class="field"><label for="filter-actor">Who (email, or cli)</label>
  <input id="filter-actor" name="actor" type="text" value="${filter.actor}" maxlength="320"></div>
  <div class="actions"><button type="submit" class="button secondary">Filter</button>${filtered ? html`<a class="button secondary" href="/admin/audit">Clear</a>` : ''}</div>
</form>
<p class="muted">${input.total} ${input.total === 1 ? 'entry' : 'entries'}${filtered ? ' match' : ''}.</p>
${body}
${pagination({ page: input.page, pageSize: input.pageSize, total: input.total, href: input.href })}`,
  })
}
