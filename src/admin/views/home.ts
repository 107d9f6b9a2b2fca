import type { AdminSession } from '../../services/sessions.js'
import { html, type SafeHtml, type SafeUrl } from '../html.js'
import { layout, ROLE_LABELS } from './layout.js'

export interface OverviewCard {
  title: string
  href: SafeUrl
  figure: string
  detail: string
  warning?: string
}

export function homePage(input: { session: AdminSession; cards: OverviewCard[] }): SafeHtml {
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
    )}</ul>`,
  })
}
