import type { Page } from '../../schemas.js'
import type { AdminForm } from '../../services/content-admin.js'
import type { AdminSession } from '../../services/sessions.js'
import { html, type SafeHtml, url } from '../html.js'
import { badge, emptyState, pagination, switchButton, table, timestamp } from './components.js'
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
    ...(showSubmissions ? ['Unread', 'Submissions'] : []),
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
          form.unreadCount === 0
            ? html`<span class="muted" aria-label="No unread submissions to ${form.title}">0</span>`
            : html`<a href="${url`/admin/forms/${form.id}/submissions?filter=unread`}" aria-label="${form.unreadCount} unread submissions to ${form.title}"><strong>${form.unreadCount}</strong></a>`,
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
