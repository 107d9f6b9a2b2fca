import { html, type SafeHtml, url } from '../../html.js'
import type { PageOf } from '../../schemas.js'
import type { KeyFilter, KeySort } from '../../services/dashboard-lists.js'
import { MAX_KEY_FORMS } from '../../services/key-scopes.js'
import type { ApiKeyView } from '../../services/keys.js'
import type { ListView } from '../../services/listing.js'
import type { Permission } from '../../services/roles.js'
import type { AdminSession } from '../../services/sessions.js'
import {
  ALL,
  type ListSpec,
  listHeader,
  listHref,
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
  rowActions,
  switchButton,
  table,
  textField,
  timestamp,
} from './components.js'
import { layout } from './layout.js'

const STATUS_BADGES = {
  active: badge('Active', 'good'),
  inactive: badge('Inactive', 'warn'),
  revoked: badge('Revoked', 'bad'),
} as const

/** The API keys list's search, filters and orders. */
export const KEY_LIST: ListSpec<KeyFilter, KeySort> = {
  base: url`/admin/keys`,
  filters: [
    ALL,
    { value: 'active', label: 'Active' },
    { value: 'inactive', label: 'Inactive' },
    { value: 'expired', label: 'Expired' },
    { value: 'revoked', label: 'Revoked' },
  ],
  sorts: [
    NEWEST_FIRST,
    OLDEST_FIRST,
    { value: 'name', label: 'Name, A–Z' },
    { value: 'last-used', label: 'Last used' },
  ],
  sizes: PAGE_SIZES,
  searchHint: 'Name, key prefix or creator',
  filterLabel: 'Status',
  noun: ['API key', 'API keys'],
}

export const keyLabel = (key: ApiKeyView) => `${key.prefix}…`

/**
 * The key's status badge, as the API answers the key (`keyStatus`), and why when the badge does not
 * say it: a key that is only past its expiry shows as expired.
 */
export const keyStatusBadge = (key: ApiKeyView): SafeHtml => {
  if (key.statusReason === 'expired') return badge('Expired', 'bad')
  const shown = STATUS_BADGES[key.status]
  return key.statusReason === null
    ? shown
    : html`${shown} <span class="muted status-reason">${key.statusReason}</span>`
}

function keyActions(key: ApiKeyView, csrf: string): SafeHtml {
  if (key.status === 'revoked') return html`<span class="muted">None: revoked for good</span>`
  return rowActions({
    subject: key.name,
    toggle: switchButton({
      csrf,
      subject: key.name,
      isOn: !key.deactivated,
      labels: ['Deactivate', 'Activate'],
      action: { off: url`/admin/keys/${key.id}/deactivate`, on: url`/admin/keys/${key.id}/activate` },
    }),
    remove: { href: url`/admin/keys/${key.id}/revoke`, label: 'Revoke' },
  })
}

export function keysPage(input: {
  session: AdminSession
  view: ListView<KeyFilter, KeySort>
  keys: PageOf<ApiKeyView>
  /** Whether any key exists at all (the view may show none of them). */
  anyKeys: boolean
  searchProblem?: string | undefined
}): SafeHtml {
  const { session, view, anyKeys } = input
  const keys = input.keys.items
  const body = !anyKeys
    ? emptyState(
        'No API keys yet',
        'A program (your website, an app, a script) needs an API key to read forms, submissions, pages and redirects from the content API.',
        html`<a class="button primary" href="/admin/keys/new">Create your first API key</a>`,
      )
    : input.keys.total === 0
      ? emptyState('No key matches', 'No API key matches the search and filter. Clear them to see every key.')
      : table({
          caption: 'API keys',
          columns: ['Name', 'Key', 'Created by', 'Created', 'Last used', 'Expires', 'Status', 'Actions'],
          rowIds: keys.map((key) => `key-${key.id}`),
          rows: keys.map((key) => [
            html`<a href="${url`/admin/keys/${key.id}`}"><strong>${key.name}</strong></a>`,
            html`<code class="key-prefix">${keyLabel(key)}</code>`,
            key.createdBy ?? html`<span class="muted">Deleted user</span>`,
            timestamp(key.createdAt),
            timestamp(key.lastUsedAt),
            timestamp(key.expiresAt, 'No expiry'),
            keyStatusBadge(key),
            keyActions(key, session.csrfToken),
          ]),
        })
  return layout({
    title: 'API keys',
    session,
    section: 'keys',
    body: html`<div class="page-head"><h1>API keys</h1>${anyKeys ? html`<a class="button primary" href="/admin/keys/new">Create new API key</a>` : ''}</div>
<p class="lead">Programs read the content API with these keys. A key can do what the role of the admin who
created it allows, checked on every request: if that admin is demoted, disabled or deleted, the key follows at once.</p>
${anyKeys ? listHeader(KEY_LIST, view, input.keys.total, input.searchProblem) : ''}
${body}
${pagination({ page: view.page, pageSize: view.size, total: input.keys.total, href: (page) => listHref(KEY_LIST, view, page) })}`,
  })
}

/** What each permission lets a program read, for the key form and the key's page. */
export const PERMISSION_LABELS: Record<Permission, string> = {
  'forms:read': 'Forms',
  'submissions:read': 'Submissions (personal data)',
  'pages:read': 'Pages',
  'redirects:read': 'Redirects',
}

/** The inputs of the key form a problem can be about (`ValidationError.field` of the key's checks). */
export const KEY_FORM_FIELDS = ['name', 'expires', 'scopes', 'forms'] as const
export type KeyFormField = (typeof KEY_FORM_FIELDS)[number]

/** The choices of a new key: what it may read, and which forms' submissions. */
export interface KeyChoices {
  /** The permissions of the creator's role: a key can be narrowed to some of them. */
  offered: readonly Permission[]
  /** Those ticked; all of them by default (no narrowing). */
  scopes: readonly Permission[]
  /** The first forms by title, for the picker. */
  forms: readonly { id: string; title: string }[]
  /** Whether the site has more forms than the picker lists: then a field takes any form's id. */
  moreForms: boolean
  /** The forms picked in the list; none (and no id typed): every form. */
  picked: readonly string[]
  /** The form ids typed in the field, as typed. */
  formIds: string
}

/** A problem said beside its field, with the id its control's `aria-describedby` names. */
const fieldProblem = (id: string, problem: string | undefined) =>
  problem === undefined ? '' : html`<p class="field-problem" id="${id}-problem">${problem}</p>`

/** `aria-describedby` (and `aria-invalid`) of a control with a hint and maybe a problem. */
const describedBy = (id: string, problem: string | undefined) =>
  html` aria-describedby="${id}-hint${problem === undefined ? '' : ` ${id}-problem`}"${problem === undefined ? '' : html` aria-invalid="true"`}`

function scopeChoices(choices: KeyChoices, problems: Partial<Record<KeyFormField, string>>): SafeHtml {
  return html`<fieldset class="field"${describedBy('field-scopes', problems.scopes)}>
      <legend>What the key may read</legend>
      <input type="hidden" name="scopesShown" value="true">
      <p class="hint" id="field-scopes-hint">Give a key only what its program needs. A key never does more than your role allows, checked on every request.</p>
      ${fieldProblem('field-scopes', problems.scopes)}
      ${choices.offered.map(
        (permission) => html`<div class="choice">
        <input type="checkbox" id="scope-${permission.replace(':', '-')}" name="scopes" value="${permission}"${choices.scopes.includes(permission) ? html` checked` : ''}>
        <label for="scope-${permission.replace(':', '-')}">${PERMISSION_LABELS[permission]} <span class="hint"><code>${permission}</code></span></label>
      </div>`,
      )}
    </fieldset>
    ${choices.offered.includes('submissions:read') && choices.forms.length > 0 ? formChoices(choices, problems.forms) : ''}`
}

/**
 * The forms a key's submissions may be narrowed to: a list of the first forms by title and, on a
 * site with more, a field for any form's ids, so that no form is out of reach and no page unbounded.
 */
function formChoices(choices: KeyChoices, problem: string | undefined): SafeHtml {
  const { forms, moreForms } = choices
  // Said beside the ids typed when there are some (an unknown id is one of them), else the list.
  const typed = moreForms && choices.formIds.trim() !== ''
  const listProblem = typed ? undefined : problem
  const cut = moreForms
    ? ` The list shows the first ${forms.length.toLocaleString('en')} forms by title; the field below takes any form's id. Pick none and give no id for every form.`
    : ' Pick none for every form.'
  return html`<div class="field">
      <label for="field-forms">Submissions of these forms only (optional)</label>
      <p class="hint" id="field-forms-hint">Pick the forms whose submissions the key may read (hold Ctrl or ⌘ to pick several).${cut}</p>
      ${fieldProblem('field-forms', listProblem)}
      <select id="field-forms" name="forms" multiple size="${Math.min(8, Math.max(3, forms.length))}"${describedBy('field-forms', listProblem)}>${forms.map(
        (form) =>
          html`<option value="${form.id}"${choices.picked.includes(form.id) ? html` selected` : ''}>${form.title} (${form.id})</option>`,
      )}</select>
    </div>
    ${
      moreForms
        ? textField({
            name: 'formIds',
            label: 'Submissions of these forms only, by id (optional)',
            value: choices.formIds,
            ...(typed && problem !== undefined ? { problem } : {}),
            autocomplete: 'off',
            hint: `The ids of any forms, in the list above or not, separated by commas or spaces (e.g. form_contact, form_newsletter); up to ${MAX_KEY_FORMS} forms in all. Each form's page shows its id as “Form id for the API”.`,
          })
        : ''
    }`
}

export function newKeyPage(input: {
  session: AdminSession
  name?: string
  expires?: string
  problems?: string[]
  /** The problem of one field, said beside it too. */
  fieldProblems?: Partial<Record<KeyFormField, string>>
  choices: KeyChoices
}): SafeHtml {
  const at = input.fieldProblems ?? {}
  return layout({
    title: 'Create an API key',
    session: input.session,
    section: 'keys',
    body: html`<section class="panel narrow">
  <h1>Create an API key</h1>
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="/admin/keys" class="stack">
    ${csrfField(input.session.csrfToken)}
    ${textField({ name: 'name', label: 'Name', value: input.name, required: true, maxlength: 100, autofocus: true, hint: 'Say where the key will be used, e.g. "Marketing website" or "Nightly backup", so you know what breaks if you revoke it.', ...(at.name === undefined ? {} : { problem: at.name }) })}
    ${textField({ name: 'expires', label: 'Expires on (optional)', type: 'date', value: input.expires ?? '', hint: 'The key stops working at the start of this day (00:00 UTC) and is then refused as inactive. Leave empty for a key that does not expire.', ...(at.expires === undefined ? {} : { problem: at.expires }) })}
    ${scopeChoices(input.choices, at)}
    <div class="actions"><button type="submit" class="button primary">Create key</button><a class="button secondary" href="/admin/keys">Cancel</a></div>
  </form>
</section>`,
  })
}

/** A list the key may read, for the example: the forms, else what its scopes name first. */
function examplePath(key: ApiKeyView): string {
  const scopes = key.scopes
  if (scopes === null || scopes.includes('forms:read')) return '/api/v1/forms'
  if (scopes.includes('pages:read')) return '/api/v1/page-builder'
  if (scopes.includes('redirects:read')) return '/api/v1/page-builder/redirects'
  return `/api/v1/forms/${key.forms?.[0] ?? '<form id>'}/submissions`
}

export function keyCreatedPage(input: {
  session: AdminSession
  key: ApiKeyView
  plainKey: string
  /** Where this server's API is, for the example. */
  apiBase: string
}): SafeHtml {
  return layout({
    title: 'API key created',
    session: input.session,
    section: 'keys',
    body: html`<section class="panel">
  <h1>API key created</h1>
  <div class="alert warning" role="alert"><strong>Copy this key now: it is shown only once.</strong>
  Lectern stores only a hash of it, so nobody can show it to you again. If you lose it, revoke it and create a new one.</div>
  <label for="new-key">API key “${input.key.name}”</label>
  <div class="copy-row">
    <input id="new-key" class="mono" type="text" readonly value="${input.plainKey}" spellcheck="false" autocomplete="off">
    <button type="button" class="button primary" data-copy-target="new-key" data-copy-status="copy-status">Copy</button>
  </div>
  <p id="copy-status" class="copy-status" role="status" aria-live="polite"></p>
  <p>Send it with every request as <code>Authorization: Bearer &lt;key&gt;</code>, for example:</p>
  <pre><code>curl -H "Authorization: Bearer ${input.plainKey}" ${input.apiBase}${examplePath(input.key)}</code></pre>
  <p><a class="button secondary" href="/admin/keys">I have copied it: back to API keys</a></p>
</section>`,
  })
}

export function revokeKeyPage(input: { session: AdminSession; key: ApiKeyView }): SafeHtml {
  const { key, session } = input
  return layout({
    title: `Revoke ${key.name}`,
    session,
    section: 'keys',
    body: confirmation({
      heading: `Revoke the API key “${key.name}”?`,
      consequences: html`<p>Programs using <code>${keyLabel(key)}</code> will be refused from their very next request.
      A revoked key cannot be activated again; it stays in the list, marked revoked. To pause a key instead, deactivate it.</p>`,
      action: url`/admin/keys/${key.id}/revoke`,
      csrf: session.csrfToken,
      confirmLabel: 'Revoke key',
      cancelHref: url`/admin/keys`,
    }),
  })
}
