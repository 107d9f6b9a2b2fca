import { html, type SafeHtml, type SafeUrl } from '../../html.js'
import type { AuditEntry } from '../../services/audit.js'
import type { AdminSession } from '../../services/sessions.js'
import { auditTable } from './audit.js'
import { layout, ROLE_LABELS } from './layout.js'

export interface OverviewCard {
  title: string
  href: SafeUrl
  figure: string
  detail: string
  warning?: string
}

/**
 * The overview: a card per section the role opens and, for those who may read the audit log, the
 * latest changes (`recent` is undefined for the others).
 */
export function homePage(input: {
  session: AdminSession
  cards: OverviewCard[]
  recent?: readonly AuditEntry[]
}): SafeHtml {
  const { recent } = input
  const { user } = input.session
  return layout({
    title: 'Overview',
    session: input.session,
    section: 'home',
    body: html`<h1>Overview</h1>
<p class="lead">Signed in as <strong>${user.email}</strong>, ${ROLE_LABELS[user.role]?.toLowerCase()}.</p>
<ul class="cards">${input.cards.map(
      (card) => html`<li class="card">
  <h2><a href="${card.href}">${card.title}</a></h2>
  <p class="figure">${card.figure}</p>
  <p class="muted">${card.detail}</p>
  ${card.warning ? html`<p class="warning-text">${card.warning}</p>` : ''}
</li>`,
    )}</ul>
${
  recent === undefined
    ? ''
    : html`<section class="recent" aria-labelledby="recent-activity">
<div class="page-head"><h2 id="recent-activity">Recent activity</h2><a class="button secondary" href="/admin/audit">The whole audit log</a></div>
${recent.length === 0 ? html`<p class="muted">Nothing has been changed yet.</p>` : auditTable(recent, 'Recent activity, newest first')}
</section>`
}`,
  })
}
