import { html, type SafeHtml, url } from '../../html.js'
import type { WebhookDelivery, WebhookEndpoint } from '../../services/notifications/webhooks.js'
import type { AdminSession } from '../../services/sessions.js'
import {
  badge,
  confirmation,
  csrfField,
  emptyState,
  errorSummary,
  postButton,
  table,
  textField,
  timestamp,
} from './components.js'
import { layout } from './layout.js'

const STATUS = {
  active: badge('Active', 'good'),
  failing: badge('Failing', 'warn'),
  disabled: badge('Disabled', 'bad'),
} as const

const DELIVERY_STATUS = {
  pending: badge('Pending', 'neutral'),
  delivered: badge('Delivered', 'good'),
  failed: badge('Failed', 'bad'),
} as const

/** What the screen says about email: sent, or not configured and so never sent. */
function mailNote(mailConfigured: boolean): SafeHtml {
  return mailConfigured
    ? html`<p class="muted">Email notifications are on: each form's “notify emails” receive its new submissions.</p>`
    : html`<div class="alert warning" role="status"><strong>Email notifications are off:</strong> this server has no
  <code>SMTP_URL</code> and <code>MAIL_FROM</code>, so no notification email is sent, whatever a form's notify emails say.</div>`
}

export function webhooksPage(input: {
  session: AdminSession
  endpoints: WebhookEndpoint[]
  mailConfigured: boolean
}): SafeHtml {
  const { session, endpoints } = input
  const body =
    endpoints.length === 0
      ? emptyState(
          'No webhook endpoints yet',
          'An endpoint receives a signed POST for each new submission and each content change, for example to rebuild a static site.',
          html`<a class="button primary" href="/admin/webhooks/new">Add an endpoint</a>`,
        )
      : table({
          caption: 'Webhook endpoints',
          columns: ['URL', 'Events', 'Form', 'Created', 'Status', 'Actions'],
          rowIds: endpoints.map((endpoint) => `webhook-${endpoint.id}`),
          rows: endpoints.map((endpoint) => [
            html`<a href="${url`/admin/webhooks/${endpoint.id}`}"><code>${endpoint.url}</code></a>`,
            endpoint.events.join(', '),
            endpoint.formId ?? html`<span class="muted">All forms</span>`,
            timestamp(endpoint.createdAt),
            STATUS[endpoint.status],
            html`<a class="button secondary" href="${url`/admin/webhooks/${endpoint.id}`}">Deliveries</a>`,
          ]),
        })
  return layout({
    title: 'Webhooks',
    session,
    section: 'webhooks',
    body: html`<div class="page-head"><h1>Webhooks</h1>${endpoints.length > 0 ? html`<a class="button primary" href="/admin/webhooks/new">Add an endpoint</a>` : ''}</div>
<p class="lead">Lectern POSTs each event to these URLs, signed with the endpoint's secret (Standard Webhooks), and retries
failed deliveries for three days.</p>
${mailNote(input.mailConfigured)}
${body}`,
  })
}

export function newWebhookPage(input: {
  session: AdminSession
  url?: string
  formId?: string
  events?: string[]
  problems?: string[]
}): SafeHtml {
  const events = input.events ?? ['submission.created', 'content.changed']
  const box = (value: string, label: string) =>
    html`<label class="checkbox"><input type="checkbox" name="events" value="${value}"${events.includes(value) ? html` checked` : ''}> ${label}</label>`
  return layout({
    title: 'Add a webhook endpoint',
    session: input.session,
    section: 'webhooks',
    body: html`<section class="panel narrow">
  <h1>Add a webhook endpoint</h1>
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="/admin/webhooks" class="stack">
    ${csrfField(input.session.csrfToken)}
    ${textField({ name: 'url', label: 'URL', value: input.url, required: true, maxlength: 2000, autofocus: true, placeholder: 'https://example.com/hooks/lectern', hint: 'An absolute http(s) URL on a public address.' })}
    <fieldset class="field"><legend>Events</legend>
      ${box('submission.created', 'submission.created: a new submission arrived')}
      ${box('content.changed', 'content.changed: forms, pages or redirects changed')}
    </fieldset>
    ${textField({ name: 'formId', label: 'Only this form (optional)', value: input.formId, maxlength: 128, hint: 'A form id: submission.created is then sent for that form only.' })}
    <div class="actions"><button type="submit" class="button primary">Add endpoint</button><a class="button secondary" href="/admin/webhooks">Cancel</a></div>
  </form>
</section>`,
  })
}

export function webhookSecretPage(input: {
  session: AdminSession
  endpoint: WebhookEndpoint
  secret: string
  heading: string
}): SafeHtml {
  return layout({
    title: input.heading,
    session: input.session,
    section: 'webhooks',
    body: html`<section class="panel">
  <h1>${input.heading}</h1>
  <div class="alert warning" role="alert"><strong>Copy this signing secret now: it is shown only once.</strong>
  Your receiver verifies each delivery's <code>webhook-signature</code> with it.</div>
  <label for="new-secret">Signing secret of <code>${input.endpoint.url}</code></label>
  <div class="copy-row">
    <input id="new-secret" class="mono" type="text" readonly value="${input.secret}" spellcheck="false" autocomplete="off">
    <button type="button" class="button primary" data-copy-target="new-secret" data-copy-status="copy-status">Copy</button>
  </div>
  <p id="copy-status" class="copy-status" role="status" aria-live="polite"></p>
  <p><a class="button secondary" href="${url`/admin/webhooks/${input.endpoint.id}`}">I have copied it: back to the endpoint</a></p>
</section>`,
  })
}

export function webhookPage(input: {
  session: AdminSession
  endpoint: WebhookEndpoint
  deliveries: WebhookDelivery[]
}): SafeHtml {
  const { session, endpoint } = input
  const csrf = session.csrfToken
  const rows = input.deliveries.map((delivery) => [
    // The id's start tells events apart; the whole id is in the title, to copy or compare with a receiver's log.
    html`<code class="nowrap" title="${delivery.eventId}">${delivery.eventId.slice(0, 12)}…</code>`,
    delivery.type,
    DELIVERY_STATUS[delivery.status],
    String(delivery.attempts),
    // The receiver's status code when it answered, else what went wrong (a timeout, a refused address).
    delivery.responseCode !== null
      ? String(delivery.responseCode)
      : (delivery.lastStatus ?? html`<span class="muted">Not tried yet</span>`),
    delivery.durationMs === null ? '–' : `${delivery.durationMs} ms`,
    timestamp(delivery.nextAttemptAt, '–'),
    timestamp(delivery.deliveredAt, '–'),
    endpoint.status === 'disabled'
      ? html`<span class="muted">Endpoint disabled</span>`
      : postButton({
          action: url`/admin/webhooks/${endpoint.id}/resend`,
          csrf,
          label: 'Resend',
          fields: { eventId: delivery.eventId },
          ariaLabel: `Resend ${delivery.eventId}`,
        }),
  ])
  return layout({
    title: `Webhook ${endpoint.url}`,
    session,
    section: 'webhooks',
    body: html`<div class="page-head"><h1>Webhook endpoint</h1></div>
<dl class="meta">
  <dt>URL</dt><dd><code>${endpoint.url}</code></dd>
  <dt>Id</dt><dd><code>${endpoint.id}</code></dd>
  <dt>Events</dt><dd>${endpoint.events.join(', ')}</dd>
  <dt>Form</dt><dd>${endpoint.formId ?? 'All forms'}</dd>
  <dt>Status</dt><dd>${STATUS[endpoint.status]}${endpoint.consecutiveFailures > 0 ? html` <span class="muted">${endpoint.consecutiveFailures} failed attempts in a row</span>` : ''}</dd>
  <dt>Last success</dt><dd>${timestamp(endpoint.lastSuccessAt)}</dd>
</dl>
<div class="actions">
  ${endpoint.status === 'disabled' ? postButton({ action: url`/admin/webhooks/${endpoint.id}/enable`, csrf, label: 'Enable again', variant: 'primary' }) : ''}
  ${postButton({ action: url`/admin/webhooks/${endpoint.id}/rotate`, csrf, label: 'Rotate secret' })}
  <a class="button danger" href="${url`/admin/webhooks/${endpoint.id}/remove`}">Remove</a>
</div>
<h2>Deliveries</h2>
${rows.length === 0 ? emptyState('No deliveries yet', 'Events sent to this endpoint are listed here, newest first.') : table({ caption: 'Deliveries', columns: ['Event', 'Type', 'Status', 'Attempts', 'Last answer', 'Duration', 'Next attempt', 'Delivered', 'Actions'], rows })}`,
  })
}

export function removeWebhookPage(input: { session: AdminSession; endpoint: WebhookEndpoint }): SafeHtml {
  const { session, endpoint } = input
  return layout({
    title: 'Remove webhook endpoint',
    session,
    section: 'webhooks',
    body: confirmation({
      heading: 'Remove this webhook endpoint?',
      consequences: html`<p><code>${endpoint.url}</code> receives nothing more, and its deliveries log is deleted.</p>`,
      action: url`/admin/webhooks/${endpoint.id}/remove`,
      csrf: session.csrfToken,
      confirmLabel: 'Remove endpoint',
      cancelHref: url`/admin/webhooks/${endpoint.id}`,
    }),
  })
}
