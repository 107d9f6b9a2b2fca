import { html, type SafeHtml, url } from '../../html.js'
import { FIELD_LIMITS } from '../../limits.js'
import type { Page, PageOf } from '../../schemas.js'
import type { AdminForm, FormField, PageField } from '../../services/content-admin.js'
import type { FormFilter, FormSort, PageFilter, PageSort } from '../../services/dashboard-lists.js'
import type { ListView } from '../../services/listing.js'
import type { AdminSession } from '../../services/sessions.js'
import {
  ALL,
  isNarrowed,
  type ListSpec,
  listHeader,
  listHref,
  listViewFields,
  NEWEST_FIRST,
  OLDEST_FIRST,
  PAGE_SIZES,
} from '../list-view.js'
import {
  badge,
  confirmation,
  csrfField,
  emptyState,
  errorSummary,
  formIdLine,
  pagination,
  rowActions,
  switchButton,
  table,
  textArea,
  textField,
  timestamp,
} from './components.js'
import { formTabs } from './form-intake.js'
import { layout } from './layout.js'

/** The forms list's search, filters and orders; the default is the API's order, oldest first. */
export const FORM_LIST: ListSpec<FormFilter, FormSort> = {
  base: url`/admin/forms`,
  filters: [
    ALL,
    { value: 'active', label: 'Active' },
    { value: 'inactive', label: 'Inactive' },
    { value: 'unread', label: 'With unread submissions' },
  ],
  sorts: [
    OLDEST_FIRST,
    NEWEST_FIRST,
    { value: 'title', label: 'Title, A–Z' },
    { value: 'updated', label: 'Recently changed' },
  ],
  sizes: PAGE_SIZES,
  searchHint: 'Part of a title or description',
  noun: ['form', 'forms'],
}

/** The pages list's search, filters and orders; the default is the API's order, oldest first. */
export const PAGE_LIST: ListSpec<PageFilter, PageSort> = {
  base: url`/admin/pages`,
  filters: [ALL, { value: 'published', label: 'Published' }, { value: 'draft', label: 'Drafts' }],
  sorts: [
    OLDEST_FIRST,
    NEWEST_FIRST,
    { value: 'title', label: 'Title, A–Z' },
    { value: 'path', label: 'Path, A–Z' },
    { value: 'updated', label: 'Recently changed' },
  ],
  sizes: PAGE_SIZES,
  searchHint: 'Part of a title, slug or path',
  noun: ['page', 'pages'],
}

const IMPORT_HINT = html`Content arrives with <code>lectern import</code> (see the README's import format).`

export function formsPage(input: {
  session: AdminSession
  view: ListView<FormFilter, FormSort>
  forms: PageOf<AdminForm>
  searchProblem?: string | undefined
  /** Whether the user reads submissions (and so sees counts and links to them). */
  showSubmissions: boolean
  canManage: boolean
}): SafeHtml {
  const { session, forms, showSubmissions, canManage, view } = input
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
    form.description
      ? form.description
      : html`<span class="muted" aria-hidden="true">—</span><span class="visually-hidden">No description</span>`,
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
          rowActions({
            subject: form.title,
            edit: url`/admin/forms/${form.id}/edit`,
            toggle: switchButton({
              csrf: session.csrfToken,
              subject: form.title,
              isOn: form.isActive,
              labels: ['Deactivate', 'Activate'],
              action: url`/admin/forms/${form.id}/active`,
              field: 'active',
              fields: listViewFields(FORM_LIST, view),
            }),
            remove: { href: url`/admin/forms/${form.id}/delete`, label: 'Delete' },
          }),
        ]
      : []),
  ])
  const create = html`<a class="button primary" href="/admin/forms/new">New form</a>`
  return layout({
    title: 'Forms',
    session,
    section: 'forms',
    body: html`<div class="page-head"><h1>Forms</h1>${canManage ? html`<div class="toolbar">${create}</div>` : ''}</div>
<p class="lead">Forms on the site. Inactive forms stay in the API, filtered out by <code>active=true</code>.</p>
${
  forms.total === 0 && !isNarrowed(FORM_LIST, view)
    ? emptyState('No forms yet', IMPORT_HINT, canManage ? create : undefined)
    : html`${listHeader(FORM_LIST, view, forms.total, input.searchProblem)}
${forms.total === 0 ? emptyState('No form matches', 'No form matches the search and filter. Clear them to see every form.') : table({ caption: 'Forms', columns, rows, rowIds: forms.items.map((form) => `form-${form.id}`) })}
${pagination({ page: view.page, pageSize: view.size, total: forms.total, href: (page) => listHref(FORM_LIST, view, page) })}`
}`,
  })
}

export function pagesPage(input: {
  session: AdminSession
  view: ListView<PageFilter, PageSort>
  pages: PageOf<Page>
  canManage: boolean
  searchProblem?: string | undefined
}): SafeHtml {
  const { session, pages, canManage, view } = input
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
          rowActions({
            subject: page.title,
            edit: url`/admin/pages/${page.id}/edit`,
            toggle: switchButton({
              csrf: session.csrfToken,
              subject: page.title,
              isOn: page.isPublished,
              labels: ['Unpublish', 'Publish'],
              action: url`/admin/pages/${page.id}/published`,
              field: 'published',
              fields: listViewFields(PAGE_LIST, view),
            }),
            remove: { href: url`/admin/pages/${page.id}/delete`, label: 'Delete' },
          }),
        ]
      : []),
  ])
  const create = html`<a class="button primary" href="/admin/pages/new">New page</a>`
  return layout({
    title: 'Pages',
    session,
    section: 'pages',
    body: html`<div class="page-head"><h1>Pages</h1>${canManage ? html`<div class="toolbar">${create}</div>` : ''}</div>
<p class="lead">Pages of the site builder. Drafts stay in the API, filtered out by <code>published=true</code>.</p>
${
  pages.total === 0 && !isNarrowed(PAGE_LIST, view)
    ? emptyState('No pages yet', IMPORT_HINT, canManage ? create : undefined)
    : html`${listHeader(PAGE_LIST, view, pages.total, input.searchProblem)}
${pages.total === 0 ? emptyState('No page matches', 'No page matches the search and filter. Clear them to see every page.') : table({ caption: 'Pages', columns, rows, rowIds: pages.items.map((page) => `page-${page.id}`) })}
${pagination({ page: view.page, pageSize: view.size, total: pages.total, href: (page) => listHref(PAGE_LIST, view, page) })}`
}`,
  })
}

/** What the form editor shows: the values as typed, so that a refused form can be corrected. */
export interface FormEditorValues {
  title: string
  description: string
  isActive: boolean
}

/** A checkbox with its label, ticked when `checked`. */
const checkbox = (name: string, label: string, checked: boolean, hint: string) =>
  html`<div class="choice">
      <input type="checkbox" id="field-${name}" name="${name}" value="true"${checked ? html` checked` : ''}>
      <label for="field-${name}">${label} <span class="hint">${hint}</span></label>
    </div>`

/** Creating a form (no `id`) or editing one; `problems` are said beside their fields and above the form. */
export function formEditorPage(input: {
  session: AdminSession
  id?: string
  values: FormEditorValues
  problems?: Partial<Record<FormField, string>>
}): SafeHtml {
  const { session, values } = input
  const problems = input.problems ?? {}
  const heading = input.id === undefined ? 'New form' : 'Edit form'
  return layout({
    title: heading,
    session,
    section: 'forms',
    body: html`<section class="panel narrow">
  <h1>${heading}</h1>
  ${input.id === undefined ? '' : html`${formIdLine(input.id)}${formTabs(input.id, 'details', session)}`}
  ${errorSummary(Object.values<string | undefined>(problems).filter((text) => text !== undefined))}
  <form method="post" action="${input.id === undefined ? url`/admin/forms` : url`/admin/forms/${input.id}`}" class="stack" novalidate>
    ${csrfField(session.csrfToken)}
    ${textField({ name: 'title', label: 'Title', value: values.title, required: true, autofocus: true, maxlength: FIELD_LIMITS.formTitle, problem: problems.title })}
    ${textArea({ name: 'description', label: 'Description (optional)', value: values.description, hint: 'What the form is for. The API shows it with the form.', maxlength: FIELD_LIMITS.formDescription, problem: problems.description })}
    ${checkbox('isActive', 'Active', values.isActive, 'Inactive forms stay in the API, filtered out by active=true.')}
    <div class="actions"><button type="submit" class="button primary">${input.id === undefined ? 'Create form' : 'Save changes'}</button><a class="button secondary" href="/admin/forms">Cancel</a></div>
  </form>
</section>`,
  })
}

/** Asking before a form is deleted, saying how many submissions go with it. */
export function deleteFormPage(input: { session: AdminSession; form: AdminForm }): SafeHtml {
  const { session, form } = input
  const count = form.submissionCount
  return layout({
    title: 'Delete form',
    session,
    section: 'forms',
    body: confirmation({
      heading: `Delete the form “${form.title}”?`,
      consequences: html`<p>${
        count === 0
          ? 'It has no submissions.'
          : html`<strong>Its ${count === 1 ? 'one submission is' : `${count} submissions are`} deleted with it.</strong>`
      } The API stops listing the form at once. This cannot be undone: to hide the form for a while instead, deactivate it.</p>`,
      action: url`/admin/forms/${form.id}/delete`,
      csrf: session.csrfToken,
      confirmLabel:
        count === 0 ? 'Delete form' : `Delete form and ${count} submission${count === 1 ? '' : 's'}`,
      cancelHref: url`/admin/forms`,
    }),
  })
}

/** What the page editor shows: the values as typed, so that a refused page can be corrected. */
export interface PageEditorValues {
  title: string
  slug: string
  path: string
  pageType: string
  isPublished: boolean
}

/** Creating a page (no `id`) or editing one; `problems` are said beside their fields and above the form. */
export function pageEditorPage(input: {
  session: AdminSession
  id?: string
  /** When the page was first published, if it is. */
  publishedAt?: string | null
  values: PageEditorValues
  problems?: Partial<Record<PageField, string>>
}): SafeHtml {
  const { session, values } = input
  const problems = input.problems ?? {}
  const heading = input.id === undefined ? 'New page' : 'Edit page'
  const published = input.publishedAt
    ? html`<p class="hint">Published since ${timestamp(input.publishedAt)}; unpublishing clears it.</p>`
    : ''
  return layout({
    title: heading,
    session,
    section: 'pages',
    body: html`<section class="panel narrow">
  <h1>${heading}</h1>
  ${input.id === undefined ? '' : formIdLine(input.id)}
  ${errorSummary(Object.values<string | undefined>(problems).filter((text) => text !== undefined))}
  <form method="post" action="${input.id === undefined ? url`/admin/pages` : url`/admin/pages/${input.id}`}" class="stack" novalidate>
    ${csrfField(session.csrfToken)}
    ${textField({ name: 'title', label: 'Title', value: values.title, required: true, autofocus: true, maxlength: FIELD_LIMITS.pageTitle, problem: problems.title })}
    ${textField({ name: 'slug', label: 'Slug', value: values.slug, placeholder: 'about-us', hint: 'The page’s short name, usually the last part of its path.', maxlength: FIELD_LIMITS.slug, problem: problems.slug })}
    ${textField({ name: 'path', label: 'Path', value: values.path, required: true, placeholder: '/about-us', hint: 'Where the page is on the site. It starts with /, and no two pages share one.', maxlength: FIELD_LIMITS.path, problem: problems.path })}
    ${textField({ name: 'pageType', label: 'Type', value: values.pageType, placeholder: 'page', hint: 'The kind of page, for the site’s builder; left empty, it is page.', maxlength: FIELD_LIMITS.pageType, problem: problems.pageType })}
    ${checkbox('isPublished', 'Published', values.isPublished, 'Drafts stay in the API, filtered out by published=true.')}
    ${published}
    <div class="actions"><button type="submit" class="button primary">${input.id === undefined ? 'Create page' : 'Save changes'}</button><a class="button secondary" href="/admin/pages">Cancel</a></div>
  </form>
</section>`,
  })
}

/** Asking before a page is deleted. */
export function deletePagePage(input: { session: AdminSession; page: Page }): SafeHtml {
  const { session, page } = input
  return layout({
    title: 'Delete page',
    session,
    section: 'pages',
    body: confirmation({
      heading: `Delete the page “${page.title}”?`,
      consequences: html`<p>The page at <code>${page.path}</code> is removed, and the API stops listing it at once.
      This cannot be undone: to take it off the site for a while instead, unpublish it. If visitors may still ask for
      its path, add a redirect from it.</p>`,
      action: url`/admin/pages/${page.id}/delete`,
      csrf: session.csrfToken,
      confirmLabel: 'Delete page',
      cancelHref: url`/admin/pages`,
    }),
  })
}
