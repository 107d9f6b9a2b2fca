import type { Page, Submission } from '../../schemas.js'
import type { AdminForm } from '../../services/content-admin.js'
import { MAX_NOTES_LENGTH } from '../../services/content-admin.js'
import type { AdminSession, Flash } from '../../services/sessions.js'
import { html, type SafeHtml, url } from '../html.js'
import {
  badge,
  csrfField,
  emptyState,
  flashMessage,
  pagination,
  postButton,
  switchButton,
  table,
  timestamp,
} from './components.js'
import { layout } from './layout.js'

interface Listing<T> {
  items: T[]
  total: number
  page: number
  pageSize: number
}

const IMPORT_HINT = html`Content arrives with <code>lectern import</code> (see the README's import format).`

export function formsPage(input: {
  session: AdminSession
  forms: Listing<AdminForm>
  /** Whether the user reads submissions (and so sees counts and links to them). */
  showSubmissions: boolean
  canManage: boolean
}): SafeHtml {
  const { session, forms, showSubmissions, canManage } = input
  const columns = [
    'Title',
    'Description',
    ...(showSubmissions ? ['Submissions'] : []),
    'Status',
    ...(canManage ? ['Actions'] : []),
  ]
  const rows = forms.items.map((form) => [
    showSubmissions
      ? html`<a href="${url`/admin/forms/${form.id}/submissions`}"><strong>${form.title}</strong></a>`
      : html`<strong>${form.title}</strong>`,
    form.description ?? html`<span class="muted">None</span>`,
    ...(showSubmissions
      ? [
          html`<a href="${url`/admin/forms/${form.id}/submissions`}" aria-label="${form.submissionCount} submissions to ${form.title}">${form.submissionCount}</a>`,
        ]
      : []),
    form.isActive ? badge('Active', 'good') : badge('Inactive', 'neutral'),
    ...(canManage
      ? [
          switchButton({
            csrf: session.csrfToken,
            subject: form.title,
            isOn: form.isActive,
            labels: ['Deactivate', 'Activate'],
            action: url`/admin/forms/${form.id}/active`,
            field: 'active',
            fields: { page: String(forms.page) },
          }),
        ]
      : []),
  ])
  return layout({
    title: 'Forms',
    session,
    section: 'forms',
    body: html`<h1>Forms</h1>
<p class="lead">Forms on the site. Inactive forms stay in the API, filtered out by <code>active=true</code>.</p>
${
  forms.total === 0
    ? emptyState('No forms yet', IMPORT_HINT)
    : html`${table({ caption: 'Forms', columns, rows, rowIds: forms.items.map((form) => `form-${form.id}`) })}
${pagination({ ...forms, href: (page) => url`/admin/forms?page=${page}` })}`
}`,
  })
}

/** A submitted value as text: strings as they are, anything else as JSON. */
const showValue = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

function submissionCard(submission: Submission, csrf: string, page: number, notice?: Flash): SafeHtml {
  const id = submission.id
  const entries = Object.entries(submission.data)
  const returnTo = { page: String(page) }
  return html`<article class="submission${submission.isRead ? '' : ' unread'}" id="submission-${id}" aria-labelledby="submission-${id}-title">
  <header>
    <h2 id="submission-${id}-title">${timestamp(submission.createdAt)}</h2>
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
  </div>
  <form method="post" action="${url`/admin/submissions/${id}/notes`}" class="notes">
    ${csrfField(csrf)}<input type="hidden" name="page" value="${page}">
    <label for="notes-${id}">Notes</label>
    <textarea id="notes-${id}" name="notes" rows="2" maxlength="${MAX_NOTES_LENGTH}">${submission.notes ?? ''}</textarea>
    <button type="submit" class="button secondary small">Save notes</button>
  </form>
</article>`
}

export function submissionsPage(input: {
  session: AdminSession
  form: AdminForm
  submissions: Listing<Submission>
  /**
   * The submission a change was just made to: the page opens scrolled to it, so the session's
   * message ("Notes saved.") is shown in its card rather than at the top, out of sight.
   */
  changed?: string
}): SafeHtml {
  const { form, submissions } = input
  const noticeFor = submissions.items.some((item) => item.id === input.changed) ? input.changed : undefined
  const notice = noticeFor ? (input.session.flash ?? undefined) : undefined
  const session = notice ? { ...input.session, flash: null } : input.session
  return layout({
    title: `Submissions to ${form.title}`,
    session,
    section: 'forms',
    body: html`<nav class="breadcrumbs" aria-label="Breadcrumbs"><a href="/admin/forms">Forms</a> › <span aria-current="page">${form.title}</span></nav>
<h1>Submissions to “${form.title}”</h1>
<p class="lead">${submissions.total} submission${submissions.total === 1 ? '' : 's'}, newest first. Flags and notes are for
administrators; the API shows them as <code>isRead</code>, <code>isStarred</code> and <code>notes</code>.</p>
${
  submissions.total === 0
    ? emptyState('No submissions yet', 'What visitors send through this form will appear here, newest first.')
    : html`<div class="submissions">${submissions.items.map((submission) =>
        submissionCard(
          submission,
          session.csrfToken,
          submissions.page,
          submission.id === noticeFor ? notice : undefined,
        ),
      )}</div>
${pagination({ ...submissions, href: (page) => url`/admin/forms/${form.id}/submissions?page=${page}` })}`
}`,
  })
}

export function pagesPage(input: {
  session: AdminSession
  pages: Listing<Page>
  canManage: boolean
}): SafeHtml {
  const { session, pages, canManage } = input
  const columns = ['Title', 'Path', 'Type', 'Status', ...(canManage ? ['Actions'] : [])]
  const rows = pages.items.map((page) => [
    html`<strong>${page.title}</strong>`,
    html`<code>${page.path}</code>`,
    page.pageType,
    page.isPublished
      ? html`${badge('Published', 'good')} <span class="muted small">since ${timestamp(page.publishedAt)}</span>`
      : badge('Draft', 'neutral'),
    ...(canManage
      ? [
          switchButton({
            csrf: session.csrfToken,
            subject: page.title,
            isOn: page.isPublished,
            labels: ['Unpublish', 'Publish'],
            action: url`/admin/pages/${page.id}/published`,
            field: 'published',
            fields: { page: String(pages.page) },
          }),
        ]
      : []),
  ])
  return layout({
    title: 'Pages',
    session,
    section: 'pages',
    body: html`<h1>Pages</h1>
<p class="lead">Pages of the site builder. Drafts stay in the API, filtered out by <code>published=true</code>.</p>
${
  pages.total === 0
    ? emptyState('No pages yet', IMPORT_HINT)
    : html`${table({ caption: 'Pages', columns, rows, rowIds: pages.items.map((page) => `page-${page.id}`) })}
${pagination({ ...pages, href: (page) => url`/admin/pages?page=${page}` })}`
}`,
  })
}
