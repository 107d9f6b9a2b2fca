import { html, type SafeHtml, url } from '../../html.js'
import type { PageOf, Redirect } from '../../schemas.js'
import type { RedirectFilter, RedirectSort } from '../../services/dashboard-lists.js'
import type { ListView } from '../../services/listing.js'
import { REDIRECT_EXPORT_FORMATS, type RedirectExportFormat } from '../../services/redirects/exports.js'
import {
  CSV_COLUMNS,
  describeChain,
  type RedirectChainsReport,
  type RedirectField,
} from '../../services/redirects/index.js'
import type { RedirectAnswer } from '../../services/redirects/matcher.js'
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
  pagination,
  postButton,
  rowActions,
  switchButton,
  table,
  textField,
} from './components.js'
import { layout } from './layout.js'

const TYPE_LABELS = { permanent: 'Permanent (301)', temporary: 'Temporary (302)' } as const

/** The redirects list's search, filters and orders; the default is the API's order, oldest first. */
export const REDIRECT_LIST: ListSpec<RedirectFilter, RedirectSort> = {
  base: url`/admin/redirects`,
  filters: [ALL, { value: 'active', label: 'Active' }, { value: 'inactive', label: 'Inactive' }],
  sorts: [
    OLDEST_FIRST,
    NEWEST_FIRST,
    { value: 'from', label: 'From path, A–Z' },
    { value: 'to', label: 'To path, A–Z' },
  ],
  sizes: PAGE_SIZES,
  searchHint: 'Part of a from or to path',
  filterLabel: 'Status',
  noun: ['redirect', 'redirects'],
}

type RedirectView = ListView<RedirectFilter, RedirectSort>

function chainWarning(chains: RedirectChainsReport, csrf: string, canManage: boolean): SafeHtml {
  // A very large set is still being analysed: say so rather than show nothing, or an outdated all-clear.
  if (chains.state === 'pending' || (chains.state === 'stale' && chains.count === 0))
    return html`<p class="muted">Checking the redirects for chains… reload the page in a moment to see the result.</p>`
  if (chains.count === 0) return html``
  const rest = chains.count - chains.listed.length
  return html`<section class="alert warning" aria-labelledby="chains-title">
  <h2 id="chains-title">${chains.count} redirect${chains.count === 1 ? ' forms a chain' : 's form chains'}</h2>
  <p>Visitors following these are redirected more than once, which is slower and loses search ranking.
  Flattening points each one straight at the end of its chain.${chains.state === 'stale' ? ' (This is how the redirects stood a moment ago: the latest changes are still being checked.)' : ''}</p>
  <ul class="chains">${chains.listed.map((chain) => html`<li><code>${describeChain(chain)}</code></li>`)}${rest > 0 ? html`<li>…and ${rest} more</li>` : ''}</ul>
  ${canManage ? postButton({ action: url`/admin/redirects/flatten`, csrf, label: 'Flatten chains', variant: 'primary' }) : ''}
</section>`
}

function redirectActions(redirect: Redirect, csrf: string, view: RedirectView): SafeHtml {
  const subject = `the redirect from ${redirect.fromPath}`
  return rowActions({
    subject,
    edit: url`/admin/redirects/${redirect.id}/edit`,
    toggle: switchButton({
      csrf,
      subject,
      isOn: redirect.isActive,
      labels: ['Deactivate', 'Activate'],
      action: url`/admin/redirects/${redirect.id}/active`,
      field: 'active',
      fields: listViewFields(REDIRECT_LIST, view),
    }),
    remove: { href: url`/admin/redirects/${redirect.id}/delete`, label: 'Delete' },
  })
}

export function redirectsPage(input: {
  session: AdminSession
  view: RedirectView
  redirects: PageOf<Redirect>
  chains: RedirectChainsReport
  canManage: boolean
  /** Why the typed search was not used, when it was not. */
  searchProblem?: string | undefined
}): SafeHtml {
  const { session, redirects, canManage, view } = input
  const csrf = session.csrfToken
  const tools = html`<div class="toolbar">
  ${canManage ? html`<a class="button primary" href="/admin/redirects/new">New redirect</a><a class="button secondary" href="/admin/redirects/import">Import CSV</a>` : ''}
  ${redirects.total > 0 ? html`<a class="button secondary" href="/admin/redirects/export.csv" download>Export CSV</a>` : ''}
  <a class="button secondary" href="/admin/redirects/apply">Apply on a web server / try a URL</a>
</div>`
  const columns = ['From', 'To', 'Type', 'Status', ...(canManage ? ['Actions'] : [])]
  const rows = redirects.items.map((redirect) => [
    html`<code>${redirect.fromPath}</code>`,
    html`<code>${redirect.toPath}</code>`,
    TYPE_LABELS[redirect.type],
    redirect.isActive ? badge('Active', 'good') : badge('Inactive', 'neutral'),
    ...(canManage ? [redirectActions(redirect, csrf, view)] : []),
  ])
  return layout({
    title: 'Redirects',
    session,
    section: 'redirects',
    body: html`<div class="page-head"><h1>Redirects</h1>${tools}</div>
<p class="lead">A visitor asking for a <em>from</em> path is sent to the <em>to</em> path, with their query string.
Paths match exactly and are case-sensitive.</p>
${chainWarning(input.chains, csrf, canManage)}
${listHeader(REDIRECT_LIST, view, redirects.total, input.searchProblem)}
${
  redirects.total === 0 && isNarrowed(REDIRECT_LIST, view)
    ? emptyState(
        'No redirect matches',
        'No redirect matches the search and filter. Clear them to see every redirect.',
      )
    : redirects.total === 0
      ? emptyState(
          'No redirects yet',
          'When a page moves, a redirect sends visitors (and search engines) from the old path to the new one.',
          canManage
            ? html`<a class="button primary" href="/admin/redirects/new">Create a redirect</a>`
            : undefined,
        )
      : html`${table({ caption: 'Redirects', columns, rows, rowIds: redirects.items.map((r) => `redirect-${r.id}`) })}
${pagination({ page: view.page, pageSize: view.size, total: redirects.total, href: (page) => listHref(REDIRECT_LIST, view, page) })}`
}`,
  })
}

export interface RedirectFormValues {
  fromPath: string
  toPath: string
  type: string
  isActive: boolean
}

export function redirectFormPage(input: {
  session: AdminSession
  /** Set when editing an existing redirect. */
  id?: string
  values: RedirectFormValues
  problems?: string[]
  /** The problems of each field, said beside it as well as above the form. */
  fields?: Partial<Record<RedirectField, string>>
}): SafeHtml {
  const { session, values } = input
  const fields = input.fields ?? {}
  const editing = input.id !== undefined
  const heading = editing ? 'Edit redirect' : 'New redirect'
  return layout({
    title: heading,
    session,
    section: 'redirects',
    body: html`<section class="panel narrow">
  <h1>${heading}</h1>
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="${input.id !== undefined ? url`/admin/redirects/${input.id}` : url`/admin/redirects`}" class="stack">
    ${csrfField(session.csrfToken)}
    ${textField({ name: 'fromPath', label: 'From path', value: values.fromPath, required: true, autofocus: true, placeholder: '/old-page', problem: fields.fromPath, hint: 'The path visitors ask for. It starts with one /, and has no query string (?) or fragment (#).' })}
    ${textField({ name: 'toPath', label: 'To path', value: values.toPath, required: true, placeholder: '/new-page', problem: fields.toPath, hint: 'Where they are sent, on this site. Paths starting with // are refused: they would send visitors to another site.' })}
    <fieldset class="field">
      <legend>Type</legend>
      ${fields.type ? html`<p class="field-problem" id="field-type-problem">${fields.type}</p>` : ''}
      ${(['permanent', 'temporary'] as const).map(
        (type) => html`<div class="choice">
        <input type="radio" id="type-${type}" name="type" value="${type}"${values.type === type ? html` checked` : ''}>
        <label for="type-${type}"><strong>${TYPE_LABELS[type]}</strong> <span class="hint">${type === 'permanent' ? 'The page has moved for good; browsers and search engines remember it.' : 'For now only; nothing is remembered.'}</span></label>
      </div>`,
      )}
    </fieldset>
    <div class="choice">
      <input type="checkbox" id="field-isActive" name="isActive" value="true"${values.isActive ? html` checked` : ''}>
      <label for="field-isActive">Active</label>
    </div>
    <div class="actions"><button type="submit" class="button primary">${editing ? 'Save changes' : 'Create redirect'}</button><a class="button secondary" href="/admin/redirects">Cancel</a></div>
  </form>
</section>`,
  })
}

export function importPage(input: { session: AdminSession; csv?: string; problems?: string[] }): SafeHtml {
  const { session } = input
  return layout({
    title: 'Import redirects',
    session,
    section: 'redirects',
    body: html`<section class="panel">
  <h1>Import redirects from CSV</h1>
  <p>The first line names the columns: <code>${CSV_COLUMNS.join(',')}</code>. <code>fromPath</code> and
  <code>toPath</code> are required; <code>type</code> is <code>permanent</code> (the default) or
  <code>temporary</code>; <code>isActive</code> is <code>true</code> (the default) or <code>false</code>.
  The file exported from this page has exactly this form.</p>
  <p>A row whose <code>fromPath</code> already exists updates that redirect; other rows add new ones; redirects
  missing from the file are left alone. The file is checked as a whole first: if any row is wrong, nothing is
  imported and every problem is listed with its line.</p>
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="/admin/redirects/import" enctype="multipart/form-data" class="stack">
    ${csrfField(session.csrfToken)}
    <div class="field">
      <label for="field-file">CSV file</label>
      <input id="field-file" name="file" type="file" accept=".csv,text/csv">
    </div>
    <div class="field">
      <label for="field-csv">Or paste the CSV here</label>
      <textarea id="field-csv" name="csv" rows="8" class="mono" spellcheck="false">${input.csv ?? ''}</textarea>
    </div>
    <div class="actions"><button type="submit" class="button primary">Import</button><a class="button secondary" href="/admin/redirects">Cancel</a></div>
  </form>
</section>`,
  })
}

export function deleteRedirectPage(input: { session: AdminSession; redirect: Redirect }): SafeHtml {
  const { session, redirect } = input
  return layout({
    title: 'Delete redirect',
    session,
    section: 'redirects',
    body: confirmation({
      heading: `Delete the redirect from ${redirect.fromPath}?`,
      consequences: html`<p>Visitors asking for <code>${redirect.fromPath}</code> will no longer be sent to
      <code>${redirect.toPath}</code>. To stop it for a while instead, deactivate it.</p>`,
      action: url`/admin/redirects/${redirect.id}/delete`,
      csrf: session.csrfToken,
      confirmLabel: 'Delete redirect',
      cancelHref: url`/admin/redirects`,
    }),
  })
}

const EXPORT_LABELS: Record<RedirectExportFormat, string> = {
  nginx: 'nginx (include inside server { })',
  apache: 'Apache (Include inside <VirtualHost>)',
  caddy: 'Caddy (import inside a site block)',
  netlify: 'Netlify (_redirects)',
  vercel: 'Vercel (vercel.json)',
  cloudflare: 'Cloudflare Bulk Redirects (CSV)',
  json: 'JSON (the flattened list)',
  csv: 'CSV (the columns of Export CSV)',
}

/**
 * Applying redirects outside Lectern: a download of every active redirect, chains flattened, for a
 * web server or platform, and a box that answers one request target as every runtime would.
 */
export function applyRedirectsPage(input: {
  session: AdminSession
  target?: string
  answer?: RedirectAnswer | null
}): SafeHtml {
  const { session, target, answer } = input
  const result =
    target === undefined
      ? ''
      : html`<p class="result" role="status">${
          answer
            ? html`<code>${target}</code> is redirected with <strong>${answer.status}</strong> to <code>${answer.location}</code>.`
            : html`<code>${target}</code> is not redirected: it is served as usual.`
        }</p>`
  return layout({
    title: 'Apply redirects',
    session,
    section: 'redirects',
    body: html`<div class="page-head"><h1>Apply redirects</h1></div>
<section class="panel">
  <h2>Try a URL</h2>
  <form method="get" action="/admin/redirects/apply" class="stack">
    ${textField({ name: 'target', label: 'Request path', value: target ?? '', required: true, placeholder: '/old-page?ref=mail', hint: 'A path with an optional ?query, as a visitor would ask for it. Only active redirects apply; chains are followed to the end.' })}
    <div class="actions"><button type="submit" class="button primary">Try it</button></div>
  </form>
  ${result}
</section>
<section class="panel">
  <h2>Download for a web server</h2>
  <p>Every active redirect, chains flattened, in the format your server or platform reads. See “Applying redirects” in the README for where each file goes, or keep it current with <code>lectern redirects export --watch</code>.</p>
  <form method="get" action="/admin/redirects/export" class="stack">
    <div class="field">
      <label for="field-format">Format</label>
      <select id="field-format" name="format">${REDIRECT_EXPORT_FORMATS.map((format) => html`<option value="${format}">${EXPORT_LABELS[format]}</option>`)}</select>
    </div>
    ${textField({ name: 'host', label: 'Site host name (Cloudflare only)', placeholder: 'www.example.com', hint: 'Cloudflare Bulk Redirects match whole URLs, so they need the host name.' })}
    <div class="actions"><button type="submit" class="button primary">Download</button><a class="button secondary" href="/admin/redirects">Back to redirects</a></div>
  </form>
</section>`,
  })
}
