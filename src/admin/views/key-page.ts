import { html, type SafeHtml, url } from '../../html.js'
import type { ApiKeyView } from '../../services/keys.js'
import type { AdminSession } from '../../services/sessions.js'
import { csrfField, errorSummary, textField, timestamp } from './components.js'
import { keyLabel, keyStatusBadge } from './keys.js'
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
