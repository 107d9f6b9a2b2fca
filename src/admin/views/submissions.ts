import { html, type SafeHtml, type SafeUrl, url, withQuery } from '../../html.js'
import type { FieldDefinition } from '../../resources/form.js'
import type { Submission } from '../../schemas.js'
import type { AdminForm } from '../../services/content-admin.js'
import { MAX_NOTES_LENGTH } from '../../services/content-admin.js'
import { type InboxFilter, type InboxSort, MAX_SEARCH_LENGTH } from '../../services/inbox.js'
import type { AdminSession, Flash } from '../../services/sessions.js'
import { PAGE_SIZES } from '../list-view.js'
import {
  badge,
  confirmation,
  csrfField,
  emptyState,
  flashMessage,
  formIdLine,
  pagination,
  postButton,
  table,
  timestamp,
} from './components.js'
import { formTabs } from './form-intake.js'
import { layout } from './layout.js'

/** The page sizes the inbox offers; the first is the default. */
export const INBOX_PAGE_SIZES = PAGE_SIZES

/** Everything that makes one view of the inbox, all of it kept in the address. */
export interface InboxView {
  view: 'cards' | 'table'
  filter: InboxFilter
  search: string
  sort: InboxSort
  page: number
  size: number
}

export const DEFAULT_VIEW: InboxView = {
  view: 'cards',
  filter: 'all',
  search: '',
  sort: 'newest',
  page: 1,
  size: INBOX_PAGE_SIZES[0],
}

/**
 * The view's parameters as they go in an address or a form; defaults are left out, and so is the
 * page when `withPage` is false (a link to another filter or view starts at its first page).
 */
export function viewParams(view: InboxView, withPage = true) {
  return {
    view: view.view === DEFAULT_VIEW.view ? undefined : view.view,
    filter: view.filter === DEFAULT_VIEW.filter ? undefined : view.filter,
    q: view.search === '' ? undefined : view.search,
    sort: view.sort === DEFAULT_VIEW.sort ? undefined : view.sort,
    size: view.size === DEFAULT_VIEW.size ? undefined : view.size,
    page: withPage ? view.page : undefined,
  }
}

/**
 * The address of a view of a form's submissions, e.g. after a change: `changed` opens it scrolled to
 * that submission, with the session's message in its card.
 */
export function inboxHref(
  formId: string,
  view: InboxView,
  options: { page?: number | undefined; changed?: string } = {},
): SafeUrl {
  const page = 'page' in options ? options.page : view.page
  return withQuery(
    url`/admin/forms/${formId}/submissions`,
    { ...viewParams({ ...view, page: page ?? view.page }, page !== undefined), changed: options.changed },
    options.changed === undefined ? undefined : `submission-${options.changed}`,
  )
}

/** The view as hidden fields, so that a change made from it comes back to it. */
function viewFields(view: InboxView): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const [name, value] of Object.entries(viewParams(view)))
    if (value !== undefined) fields[name] = String(value)
  return fields
}

const hiddenFields = (fields: Record<string, string>, form?: string) =>
  Object.entries(fields).map(
    ([name, value]) =>
      html`<input type="hidden" name="${name}" value="${value}"${form ? html` form="${form}"` : ''}>`,
  )

/** A submitted value as text: strings as they are, anything else as JSON. */
const showValue = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

/** The first fields of a submission on one line, for the table view. */
function summary(submission: Submission): string {
  const text = Object.entries(submission.data)
    .slice(0, 3)
    .map(([name, value]) => `${name}: ${showValue(value)}`)
    .join(' · ')
  return text.length > 140 ? `${text.slice(0, 139)}…` : text
}

const BULK_FORM = 'bulk'

function selectBox(submission: Submission): SafeHtml {
  return html`<input type="checkbox" name="ids" value="${submission.id}" form="${BULK_FORM}" id="select-${submission.id}" aria-label="Select the submission of ${submission.createdAt}">`
}

const deleteLink = (submission: Submission, view: InboxView) =>
  html`<a class="button danger" href="${withQuery(url`/admin/submissions/${submission.id}/delete`, viewParams(view))}" aria-label="Delete the submission of ${submission.createdAt}…">Delete…</a>`

function submissionCard(submission: Submission, csrf: string, view: InboxView, notice?: Flash): SafeHtml {
  const id = submission.id
  const entries = Object.entries(submission.data)
  const returnTo = viewFields(view)
  return html`<article class="submission${submission.isRead ? '' : ' unread'}" id="submission-${id}" aria-labelledby="submission-${id}-title">
  <header>
    <h2 id="submission-${id}-title">${selectBox(submission)} ${timestamp(submission.createdAt)}</h2>
    <div class="badges">
      ${submission.isRead ? badge('Read', 'neutral') : badge('Unread', 'warn')}
      ${submission.isStarred ? badge('★ Starred', 'good') : ''}
    </div>
  </header>
  ${notice ? flashMessage(notice) : ''}
  ${
    entries.length === 0
      ? html`<p class="muted">No fields were submitted.</p>`
      : html`<dl class="data">${entries.map(([name, value]) => html`<dt>${name}</dt><dd>${showValue(value)}</dd>`)}</dl>`
  }
  <details>
    <summary>Where it came from</summary>
    <dl class="meta">
      <dt>IP address</dt><dd>${submission.ipAddress ?? '—'}</dd>
      <dt>Browser</dt><dd>${submission.userAgent ?? '—'}</dd>
      <dt>Referrer</dt><dd>${submission.referrer ?? '—'}</dd>
      <dt>Submitted by</dt><dd>${submission.submittedBy ?? '—'}</dd>
      <dt>Last changed</dt><dd>${timestamp(submission.updatedAt)}</dd>
    </dl>
  </details>
  <div class="actions">
    ${postButton({
      action: url`/admin/submissions/${id}/read`,
      csrf,
      label: submission.isRead ? 'Mark as unread' : 'Mark as read',
      fields: { read: submission.isRead ? 'false' : 'true', ...returnTo },
    })}
    ${postButton({
      action: url`/admin/submissions/${id}/star`,
      csrf,
      label: submission.isStarred ? 'Unstar' : 'Star',
      fields: { starred: submission.isStarred ? 'false' : 'true', ...returnTo },
    })}
    ${deleteLink(submission, view)}
  </div>
  <form method="post" action="${url`/admin/submissions/${id}/notes`}" class="notes">
    ${csrfField(csrf)}${hiddenFields(returnTo)}
    <label for="notes-${id}">Notes</label>
    <textarea id="notes-${id}" name="notes" rows="2" maxlength="${MAX_NOTES_LENGTH}">${submission.notes ?? ''}</textarea>
    <button type="submit" class="button secondary small">Save notes</button>
  </form>
</article>`
}

/** A value in a table cell: at most a line or two. */
const cellText = (value: unknown) => {
  const text = showValue(value)
  return text.length > 140 ? `${text.slice(0, 139)}…` : text
}

/**
 * The table view: a column per defined field, in the form's order, then the fields it does not
 * define (as one summary), for a form that defines some; the first few fields otherwise.
 */
function submissionTable(
  items: readonly Submission[],
  view: InboxView,
  fields: readonly FieldDefinition[],
): SafeHtml {
  const defined = new Set(fields.map((definition) => definition.name))
  const others = (submission: Submission) =>
    summary({
      ...submission,
      data: Object.fromEntries(Object.entries(submission.data).filter(([name]) => !defined.has(name))),
    })
  const showOthers = fields.length === 0 || items.some((submission) => others(submission) !== '')
  const none = html`<span class="muted" aria-hidden="true">—</span><span class="visually-hidden">None</span>`
  const columns = [
    'Select',
    'Received',
    ...fields.map((definition) => definition.label),
    ...(showOthers ? [fields.length === 0 ? 'Submitted data' : 'Other data'] : []),
    'Status',
    'Notes',
    'Actions',
  ]
  const rows = items.map((submission) => [
    selectBox(submission),
    timestamp(submission.createdAt),
    ...fields.map((definition) =>
      Object.hasOwn(submission.data, definition.name) ? cellText(submission.data[definition.name]) : none,
    ),
    ...(showOthers
      ? [others(submission) || html`<span class="muted">${fields.length === 0 ? 'No fields' : '—'}</span>`]
      : []),
    html`${submission.isRead ? badge('Read', 'neutral') : badge('Unread', 'warn')} ${submission.isStarred ? badge('★ Starred', 'good') : ''}`,
    submission.notes ?? html`<span class="muted">—</span>`,
    deleteLink(submission, view),
  ])
  return table({
    caption: 'Submissions',
    columns,
    rows,
    rowIds: items.map((submission) => `submission-${submission.id}`),
  })
}

function option<T extends string | number>(value: T, label: string, current: T): SafeHtml {
  return html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`
}

/** The view's controls: a GET form, so every choice ends up in the address and can be bookmarked. */
function viewControls(form: AdminForm, view: InboxView, searchProblem: string | undefined): SafeHtml {
  const base = url`/admin/forms/${form.id}/submissions`
  const link = (label: string, change: Partial<InboxView>, current: boolean) =>
    current
      ? html`<a href="${withQuery(base, viewParams({ ...view, ...change }, false))}" aria-current="true"><strong>${label}</strong></a>`
      : html`<a href="${withQuery(base, viewParams({ ...view, ...change }, false))}">${label}</a>`
  const exportHref = (format: 'csv' | 'json') =>
    withQuery(url`/admin/forms/${form.id}/submissions/export`, {
      format,
      filter: view.filter === 'all' ? undefined : view.filter,
      q: view.search === '' ? undefined : view.search,
      sort: view.sort === 'newest' ? undefined : view.sort,
    })
  // One "Show" control (the filter, in the form with the search and order); the links are the
  // layout and the exports, which are not part of the view's query.
  return html`<nav class="toolbar" aria-label="Views">
  <span>View as</span> ${link('Cards', { view: 'cards' }, view.view === 'cards')} ${link('Table', { view: 'table' }, view.view === 'table')}
  <span aria-hidden="true">·</span> <span>Export this view:</span> <a href="${exportHref('csv')}" download>CSV</a> <a href="${exportHref('json')}" download>JSON</a>
</nav>
<form method="get" action="${base}" class="filters" role="search" aria-label="Find submissions">
  ${view.view === 'cards' ? '' : html`<input type="hidden" name="view" value="${view.view}">`}
  <div class="field"><label for="inbox-q">Search</label>
  <input id="inbox-q" name="q" type="search" value="${view.search}" maxlength="${MAX_SEARCH_LENGTH}"${searchProblem ? html` aria-invalid="true"` : ''} placeholder="Text in the data or notes"></div>
  <div class="field"><label for="inbox-filter">Show</label>
  <select id="inbox-filter" name="filter">${option('all', 'All', view.filter)}${option('unread', 'Unread', view.filter)}${option('starred', 'Starred', view.filter)}</select></div>
  <div class="field"><label for="inbox-sort">Order</label>
  <select id="inbox-sort" name="sort">${option('newest', 'Newest first', view.sort)}${option('oldest', 'Oldest first', view.sort)}</select></div>
  <div class="field"><label for="inbox-size">Per page</label>
  <select id="inbox-size" name="size">${INBOX_PAGE_SIZES.map((size) => option(size, String(size), view.size))}</select></div>
  <div class="actions"><button type="submit" class="button secondary">Apply</button></div>
</form>`
}

/** The bulk actions: one form the checkboxes of the list join through their `form` attribute. */
function bulkForm(form: AdminForm, view: InboxView, csrf: string): SafeHtml {
  return html`<form id="${BULK_FORM}" method="post" action="${url`/admin/forms/${form.id}/submissions/bulk`}" class="toolbar" aria-label="With the selected submissions">
  ${csrfField(csrf)}${hiddenFields(viewFields(view))}
  <span>With the selected:</span>
  <button type="submit" name="action" value="read" class="button secondary">Mark read</button>
  <button type="submit" name="action" value="unread" class="button secondary">Mark unread</button>
  <button type="submit" name="action" value="star" class="button secondary">Star</button>
  <button type="submit" name="action" value="unstar" class="button secondary">Unstar</button>
  <button type="submit" name="action" value="delete" class="button danger">Delete</button>
</form>`
}

/** A form's submission inbox: cards or a compact table, filtered, searched, sorted, paged. */
export function submissionsPage(input: {
  session: AdminSession
  form: AdminForm
  view: InboxView
  submissions: { items: Submission[]; total: number }
  /** The form's field definitions: the table view has a column for each. */
  fields?: readonly FieldDefinition[]
  /** Whether the user may change submissions (flags, notes, deletion). */
  canManage: boolean
  /** Why the typed search was not used, when it was not. */
  searchProblem?: string
  /** The submission a change was just made to: the page opens at it, with the message in its card. */
  changed?: string
}): SafeHtml {
  const { form, submissions, view } = input
  const noticeFor =
    view.view === 'cards' && submissions.items.some((item) => item.id === input.changed)
      ? input.changed
      : undefined
  const notice = noticeFor ? (input.session.flash ?? undefined) : undefined
  const session = notice ? { ...input.session, flash: null } : input.session
  const narrowed = view.filter !== 'all' || view.search !== ''
  const what = `${submissions.total} submission${submissions.total === 1 ? '' : 's'}`
  const list =
    view.view === 'table'
      ? submissionTable(submissions.items, view, input.fields ?? [])
      : html`<div class="submissions">${submissions.items.map((submission) =>
          submissionCard(
            submission,
            session.csrfToken,
            view,
            submission.id === noticeFor ? notice : undefined,
          ),
        )}</div>`
  return layout({
    title: `Submissions to ${form.title}`,
    session,
    section: 'forms',
    body: html`<nav class="breadcrumbs" aria-label="Breadcrumbs"><a href="/admin/forms">Forms</a> › <span aria-current="page">${form.title}</span></nav>
<h1>Submissions to “${form.title}”</h1>
${formIdLine(form.id)}
${formTabs(form.id, 'submissions', session)}
<p class="lead">${narrowed ? `${what} in this view` : what}, ${view.sort === 'newest' ? 'newest' : 'oldest'} first. Flags and notes are for
administrators; the API shows them as <code>isRead</code>, <code>isStarred</code> and <code>notes</code>.</p>
${input.searchProblem ? html`<div class="alert error" role="alert">${input.searchProblem} The search was not used.</div>` : ''}
${viewControls(form, view, input.searchProblem)}
${
  submissions.total === 0
    ? narrowed
      ? emptyState(
          'Nothing in this view',
          'No submission matches the filter and search. Show all to see the others.',
        )
      : emptyState(
          'No submissions yet',
          'What visitors send through this form will appear here, newest first.',
        )
    : html`${input.canManage ? bulkForm(form, view, session.csrfToken) : ''}
${list}
${pagination({ page: view.page, pageSize: view.size, total: submissions.total, href: (page) => inboxHref(form.id, view, { page }) })}`
}`,
  })
}

/** Asks before a submission is erased for good. */
export function deleteSubmissionPage(input: {
  session: AdminSession
  form: AdminForm
  submission: Submission
  view: InboxView
}): SafeHtml {
  const { form, submission, view } = input
  return layout({
    title: 'Delete a submission',
    session: input.session,
    section: 'forms',
    body: confirmation({
      heading: `Delete the submission of ${submission.createdAt}?`,
      consequences: html`<p>The submission to “${form.title}” (${summary(submission) || 'no fields'}) is erased
from the database, with its notes. The API stops listing it on the next request. This cannot be undone.</p>`,
      action: withQuery(url`/admin/submissions/${submission.id}/delete`, viewParams(view)),
      csrf: input.session.csrfToken,
      confirmLabel: 'Delete the submission',
      cancelHref: inboxHref(form.id, view, { changed: submission.id }),
    }),
  })
}

/** Asks before the selected submissions are erased for good, listing them. */
export function bulkDeletePage(input: {
  session: AdminSession
  form: AdminForm
  submissions: readonly Submission[]
  view: InboxView
}): SafeHtml {
  const { form, submissions, view } = input
  const count = `${submissions.length} submission${submissions.length === 1 ? '' : 's'}`
  const shown = submissions.slice(0, 10)
  return layout({
    title: `Delete ${count}`,
    session: input.session,
    section: 'forms',
    body: html`<section class="panel confirm">
  <h1>Delete ${count}?</h1>
  <p>These submissions to “${form.title}” are erased from the database, with their notes. The API stops
  listing them on the next request. This cannot be undone.</p>
  <ul>${shown.map((submission) => html`<li>${timestamp(submission.createdAt)}: ${summary(submission) || 'no fields'}</li>`)}${submissions.length > shown.length ? html`<li>…and ${submissions.length - shown.length} more</li>` : ''}</ul>
  <form method="post" action="${url`/admin/forms/${form.id}/submissions/bulk`}" class="actions">
    ${csrfField(input.session.csrfToken)}${hiddenFields(viewFields(view))}
    <input type="hidden" name="action" value="delete"><input type="hidden" name="confirmed" value="yes">
    ${submissions.map((submission) => html`<input type="hidden" name="ids" value="${submission.id}">`)}
    <button type="submit" class="button danger">Delete ${count}</button>
    <a class="button secondary" href="${inboxHref(form.id, view)}">Cancel</a>
  </form>
</section>`,
  })
}
