import { html, type SafeHtml, url } from '../../html.js'
import type { ApiKeyView } from '../../services/keys.js'
import { PERMISSIONS, type Permission } from '../../services/roles.js'
import type { AdminSession } from '../../services/sessions.js'
import { csrfField, errorSummary, textField, timestamp } from './components.js'
import { keyLabel, keyStatusBadge, PERMISSION_LABELS } from './keys.js'
import { layout } from './layout.js'

/** One API key: what it is, when it was used, when it expires; rename it; and (when given) its usage. */
export function keyPage(input: {
  session: AdminSession
  key: ApiKeyView
  /** The name typed into the rename form, when it was refused. */
  name?: string
  problems?: string[]
  /** The usage section, drawn by the usage view. */
  usage?: SafeHtml
  /** What the key may do now (see `findKeyAccess`). */
  access?: KeyAccess
}): SafeHtml {
  const { session, key } = input
  return layout({
    title: key.name,
    session,
    section: 'keys',
    body: html`<p><a href="/admin/keys">← API keys</a></p>
<div class="page-head"><h1>${key.name}</h1>${keyStatusBadge(key)}</div>
<dl class="meta">
  <dt>Key</dt><dd><code>${keyLabel(key)}</code></dd>
  ${input.access ? accessRows(key, input.access) : ''}
  <dt>Created by</dt><dd>${key.createdBy ?? html`<span class="muted">Deleted user</span>`}</dd>
  <dt>Created</dt><dd>${timestamp(key.createdAt)}</dd>
  <dt>Last used</dt><dd>${timestamp(key.lastUsedAt)}</dd>
  <dt>Expires</dt><dd>${timestamp(key.expiresAt, 'No expiry')}</dd>
</dl>
${input.usage ?? ''}
<section class="panel narrow" aria-labelledby="rename-heading">
  <h2 id="rename-heading">Rename</h2>
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="${url`/admin/keys/${key.id}/rename`}" class="stack">
    ${csrfField(session.csrfToken)}
    ${textField({ name: 'name', label: 'Name', value: input.name ?? key.name, required: true, maxlength: 100, hint: 'Programs using the key are not affected: only the label changes.' })}
    <div class="actions"><button type="submit" class="button primary">Rename key</button></div>
  </form>
</section>`,
  })
}

export interface KeyAccess {
  role: string | null
  permissions: Permission[]
  forms: { id: string; title: string | null }[] | null
}

/**
 * What the key may read now, and why not the rest: left out by its scopes, or by its owner's role
 * (the role wins: a demoted owner's key loses what the role lost, whatever its scopes).
 */
function accessRows(key: ApiKeyView, access: KeyAccess): SafeHtml {
  const refused = PERMISSIONS.filter((permission) => !access.permissions.includes(permission))
  const why = (permission: Permission) =>
    key.scopes !== null && !key.scopes.includes(permission) ? 'not in its scopes' : "not in its owner's role"
  const may =
    access.permissions.length === 0
      ? html`<span class="muted">Nothing</span>`
      : html`${access.permissions.map((permission, i) => html`${i > 0 ? ', ' : ''}${PERMISSION_LABELS[permission]} (<code>${permission}</code>)`)}`
  const forms =
    access.forms === null
      ? 'Every form'
      : html`${access.forms.map((form, i) => html`${i > 0 ? ', ' : ''}${form.title ?? html`<span class="muted">deleted form</span>`} (<code>${form.id}</code>)`)}`
  return html`<dt>May read</dt><dd>${may}${key.scopes === null ? html` <span class="muted">(everything its owner's role allows)</span>` : ''}</dd>
  ${refused.length > 0 ? html`<dt>May not read</dt><dd>${refused.map((permission, i) => html`${i > 0 ? '; ' : ''}<code>${permission}</code>: ${why(permission)}`)}</dd>` : ''}
  ${access.permissions.includes('submissions:read') ? html`<dt>Submissions of</dt><dd>${forms}</dd>` : ''}`
}
