import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { isIP } from 'node:net'
import type { Kysely } from 'kysely'
import nodemailer from 'nodemailer'
import { findFormForEmail } from '../../db/repositories/forms.js'
import type { Database, NotificationDeliveriesTable, NotificationEventsTable } from '../../db/tables.js'
import { settledWithin } from '../../deadline.js'
import { parseStoredIntake } from '../../resources/form.js'
import { formatTimestamp } from '../../time.js'
import { bareHost, checkedLookup, isPublicAddress, urlProblem } from './addresses.js'
import type { ClaimedBatch } from './claim.js'
import { submissionMail } from './email.js'
import type { Outcome } from './outcome.js'
import { post } from './post.js'
import { type SecretBox, secretBox, signatureHeader } from './secrets.js'

export interface SenderOptions {
  /** `WEBHOOK_ALLOW_PRIVATE`: private and loopback addresses may be called. */
  allowPrivate: boolean
  /** The key the signing secrets are encrypted under. */
  secretKey: () => Buffer
  smtpUrl?: string
  mailFrom?: string
  publicUrl?: string
  /** Connections kept per protocol: the attempts in flight at once. */
  concurrency: number
  /** How long one attempt may take. */
  timeoutMs: number
  clock: () => number
}

/** An error as an attempt's error detail. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A webhook's event id and body, as signed and sent. */
function eventBody(event: NotificationEventsTable): { id: string; body: string } {
  const data = JSON.parse(event.data) as Record<string, unknown>
  return {
    id: event.id,
    body: JSON.stringify({
      id: event.id,
      type: event.type,
      createdAt: event.created_at,
      data: event.type === 'submission.created' ? { ...data, formId: event.form_id } : data,
    }),
  }
}

/**
 * Makes single attempts: a webhook POST (signed as Standard Webhooks says, to public addresses
 * only unless allowed) or an email through SMTP. Keeps the connections, the mail transport and the
 * opened signing secrets until `close()`.
 */
export function createSender(db: Kysely<Database>, options: SenderOptions) {
  const { clock, timeoutMs } = options
  const lookup = checkedLookup(options.allowPrivate)
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: options.concurrency, lookup }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: options.concurrency, lookup }),
  }
  const mailer =
    options.smtpUrl && options.mailFrom
      ? nodemailer.createTransport({
          url: options.smtpUrl,
          connectionTimeout: timeoutMs,
          greetingTimeout: timeoutMs,
          socketTimeout: timeoutMs,
        } as Parameters<typeof nodemailer.createTransport>[0])
      : undefined
  let box: SecretBox | undefined
  // Decrypted secrets by their sealed text, kept in memory only.
  const opened = new Map<string, string>()
  const openSecret = (sealed: string): string => {
    let plain = opened.get(sealed)
    if (plain === undefined) {
      box ??= secretBox(options.secretKey())
      plain = box.open(sealed)
      if (opened.size > 1000) opened.clear()
      opened.set(sealed, plain)
    }
    return plain
  }
  const openedOrNull = (sealed: string): string | null => {
    try {
      return openSecret(sealed)
    } catch {
      return null
    }
  }

  async function sendWebhook(
    delivery: NotificationDeliveriesTable,
    batch: ClaimedBatch,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const endpoint = batch.endpoints.get(delivery.endpoint_id ?? '')
    if (endpoint?.status !== 'active')
      return { ok: false, lastStatus: 'endpoint_disabled', responseCode: null, error: null, final: true }
    const stored = batch.events.get(delivery.event_id)
    if (!stored)
      return { ok: false, lastStatus: 'event_missing', responseCode: null, error: null, final: true }
    const event = eventBody(stored)
    const problem = urlProblem(endpoint.url)
    if (problem) return { ok: false, lastStatus: 'refused', responseCode: null, error: problem, final: true }
    const url = new URL(endpoint.url)
    const host = bareHost(url)
    // Literal addresses never reach `lookup`: they are checked here.
    if (isIP(host) && !options.allowPrivate && !isPublicAddress(host))
      return {
        ok: false,
        lastStatus: 'refused',
        responseCode: null,
        error: `${host} is not a public address`,
      }
    const secrets = [openSecret(endpoint.secret)]
    if (
      endpoint.previous_secret !== null &&
      endpoint.previous_secret_until !== null &&
      endpoint.previous_secret_until > formatTimestamp(new Date(clock()))
    ) {
      // Rotated after `SECRET_KEY` changed, as the docs ask: the previous secret is sealed under
      // the old key, no one can sign with it any more, and the new one signs alone.
      const previous = openedOrNull(endpoint.previous_secret)
      if (previous !== null) secrets.push(previous)
    }
    const timestamp = Math.floor(clock() / 1000)
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Lectern-Webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, event.id, timestamp, event.body),
    }
    return post(url, headers, event.body, { agents, signal, timeoutMs })
  }

  async function sendEmail(
    delivery: NotificationDeliveriesTable,
    batch: ClaimedBatch,
    signal: AbortSignal,
  ): Promise<Outcome> {
    if (!mailer || !options.mailFrom)
      return {
        ok: false,
        lastStatus: 'mail_not_configured',
        responseCode: null,
        error: 'SMTP_URL and MAIL_FROM are not set',
        final: true,
      }
    const event = batch.events.get(delivery.event_id)
    if (!event || event.form_id === null)
      return { ok: false, lastStatus: 'event_missing', responseCode: null, error: null, final: true }
    const form = await findFormForEmail(db, event.form_id)
    const settings = parseStoredIntake(form?.intake ?? null)
    const submission = JSON.parse(event.data) as {
      id: string
      data: Record<string, unknown>
      createdAt: string
    }
    const mail = submissionMail({
      form: { id: event.form_id, title: form?.title ?? event.form_id, fields: settings.fields },
      submission,
      recipients: settings.notifyEmails,
      publicUrl: options.publicUrl,
    })
    if (!mail) return { ok: false, lastStatus: 'no_recipients', responseCode: null, error: null, final: true }
    const sending = mailer
      .sendMail({
        from: options.mailFrom,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.replyTo ? { replyTo: { name: '', address: mail.replyTo } } : {}),
        headers: { 'X-Lectern-Event-Id': event.id },
        disableFileAccess: true,
        disableUrlAccess: true,
      })
      .then(
        (info): Outcome => {
          const code = Number(/^(\d{3})/.exec(String(info.response ?? ''))?.[1] ?? 250)
          return { ok: true, lastStatus: 'delivered', responseCode: code, error: null }
        },
        (error: unknown): Outcome => {
          const code = (error as { responseCode?: number }).responseCode ?? null
          return {
            ok: false,
            lastStatus: code ? `smtp_${code}` : 'connection_error',
            responseCode: code,
            error: describe(error),
          }
        },
      )
    // The transport's timeouts bound each step, not the whole: a server that answers every few
    // seconds keeps one send going for minutes, past the delivery's lease, and another attempt
    // would start beside it. An attempt ends at the deadline, as a webhook's does, and is retried.
    const outcome = await settledWithin(sending, timeoutMs, signal)
    return (
      outcome ?? {
        ok: false,
        lastStatus: 'timeout',
        responseCode: null,
        error: `the mail server did not take the message within ${timeoutMs} ms`,
      }
    )
  }

  return {
    /** Makes one attempt of a claimed delivery; anything thrown becomes an `error` outcome. */
    async send(
      delivery: NotificationDeliveriesTable,
      batch: ClaimedBatch,
      signal: AbortSignal,
    ): Promise<Outcome> {
      try {
        return delivery.channel === 'email'
          ? await sendEmail(delivery, batch, signal)
          : await sendWebhook(delivery, batch, signal)
      } catch (error) {
        return { ok: false, lastStatus: 'error', responseCode: null, error: describe(error) }
      }
    },
    /** Closes the connections and the mail transport. */
    close(): void {
      agents.http.destroy()
      agents.https.destroy()
      mailer?.close()
    },
  }
}

export type Sender = ReturnType<typeof createSender>
