import { html, type SafeHtml } from '../../html.js'
import type { AdminSession } from '../../services/sessions.js'
import { layout } from './layout.js'

export function errorPage(input: {
  title: string
  message: string
  session: AdminSession | null
  requestId?: string
}): SafeHtml {
  const back = input.session
    ? html`<a class="button secondary" href="/admin">Go to the overview</a>`
    : html`<a class="button secondary" href="/admin/login">Go to sign-in</a>`
  return layout({
    title: input.title,
    session: input.session,
    body: html`<section class="panel narrow">
  <h1>${input.title}</h1>
  <p>${input.message}</p>
  ${input.requestId ? html`<p class="muted small">Request id: <code>${input.requestId}</code></p>` : ''}
  <p>${back}</p>
</section>`,
  })
}
