import type { Kysely } from 'kysely'
import { formExists } from '../../db/repositories/forms.js'
import {
  deleteDeliveriesTo,
  listDeliveriesTo,
  scheduleWebhookDelivery,
} from '../../db/repositories/notification-deliveries.js'
import { eventExists } from '../../db/repositories/notification-events.js'
import {
  activateEndpoint,
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  replaceEndpointSecret,
} from '../../db/repositories/webhook-endpoints.js'
import type { Database, NotificationEventType, WebhookEndpointsTable } from '../../db/tables.js'
import { NotFoundError, ValidationError } from '../../errors.js'
import { randomBase62 } from '../../ids.js'
import { formatTimestamp } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { checkDestination } from './addresses.js'
import { EVENT_TYPES, outboxWritten, RETRY_WINDOW_MS } from './outbox.js'
import { newSigningSecret, secretBox } from './secrets.js'
import { FAILING_AFTER } from './worker.js'

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000

export type EndpointStatus = 'active' | 'failing' | 'disabled'

/** An endpoint as the CLI and the dashboard show it (never its secret). */
export interface WebhookEndpoint {
  id: string
  url: string
  events: NotificationEventType[]
  formId: string | null
  status: EndpointStatus
  createdAt: string
  consecutiveFailures: number
  lastSuccessAt: string | null
  lastFailureAt: string | null
}

/** One delivery of an endpoint, newest first in listings. */
export interface WebhookDelivery {
  eventId: string
  type: NotificationEventType
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  lastStatus: string | null
  responseCode: number | null
  durationMs: number | null
  nextAttemptAt: string | null
  deliveredAt: string | null
  createdAt: string
}

export interface WebhookServiceOptions {
  /** `WEBHOOK_ALLOW_PRIVATE`. */
  allowPrivate: boolean
  /** The key the secrets are encrypted under (may refuse: PostgreSQL without `SECRET_KEY`). */
  secretKey: () => Buffer
  clock?: () => number
}

export function toEndpoint(row: WebhookEndpointsTable): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as NotificationEventType[],
    formId: row.form_id,
    status:
      row.status === 'disabled'
        ? 'disabled'
        : row.consecutive_failures >= FAILING_AFTER
          ? 'failing'
          : 'active',
    createdAt: row.created_at,
    consecutiveFailures: row.consecutive_failures,
    lastSuccessAt: row.last_success_at,
    lastFailureAt: row.last_failure_at,
  }
}

/** Reads `--events`-style input: a list of event types, default all of them. */
export function readEvents(input: readonly string[] | string | undefined): NotificationEventType[] {
  const list =
    input === undefined
      ? [...EVENT_TYPES]
      : (typeof input === 'string' ? input.split(',') : input).map((event) => event.trim()).filter(Boolean)
  if (list.length === 0)
    throw new ValidationError(`Events must name at least one of ${EVENT_TYPES.join(', ')}`)
  const unknown = list.filter((event) => !(EVENT_TYPES as readonly string[]).includes(event))
  if (unknown.length > 0)
    throw new ValidationError(
      `Unknown event ${unknown.map((e) => `'${e}'`).join(', ')}: use ${EVENT_TYPES.join(', ')}`,
    )
  return EVENT_TYPES.filter((event) => list.includes(event))
}

/** Webhook endpoints: adding (the secret shown once), listing, removing, rotating, deliveries, resending. */
export function createWebhookService(db: Kysely<Database>, options: WebhookServiceOptions) {
  const clock = options.clock ?? Date.now
  const box = () => secretBox(options.secretKey())

  async function row(id: string): Promise<WebhookEndpointsTable> {
    const found = await findEndpoint(db, id)
    if (!found) throw new NotFoundError(`Webhook endpoint '${id}' not found`)
    return found
  }

  return {
    /** Adds an endpoint after checking where its URL leads; returns it with its secret, shown this once. */
    async add(
      input: { url: string; events?: readonly string[] | string; formId?: string | null },
      actor: Actor = 'cli',
    ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
      const url = input.url.trim()
      const events = readEvents(input.events)
      await checkDestination(url, options.allowPrivate)
      const formId = input.formId === undefined || input.formId === '' ? null : input.formId
      const secret = newSigningSecret()
      const sealed = box().seal(secret)
      const inserted = await db.transaction().execute(async (trx) => {
        if (formId !== null && !(await formExists(trx, formId)))
          throw new NotFoundError(`Form '${formId}' not found`)
        const values: WebhookEndpointsTable = {
          id: `whk_${randomBase62(20)}`,
          url,
          events: JSON.stringify(events),
          form_id: formId,
          status: 'active',
          secret: sealed,
          previous_secret: null,
          previous_secret_until: null,
          consecutive_failures: 0,
          last_failure_at: null,
          last_success_at: null,
          created_at: formatTimestamp(new Date(clock())),
        }
        await insertEndpoint(trx, values)
        await recordAudit(trx, {
          actor,
          action: 'webhook.created',
          target: values.id,
          detail: { url, events, formId },
        })
        return values
      })
      return { endpoint: toEndpoint(inserted), secret }
    },

    async list(): Promise<WebhookEndpoint[]> {
      return (await listEndpoints(db)).map(toEndpoint)
    },

    async get(id: string): Promise<WebhookEndpoint> {
      return toEndpoint(await row(id))
    },

    /** Removes an endpoint and its deliveries. */
    async remove(id: string, actor: Actor = 'cli'): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const found = await findEndpoint(trx, id)
        if (!found) throw new NotFoundError(`Webhook endpoint '${id}' not found`)
        await deleteDeliveriesTo(trx, id)
        await deleteEndpoint(trx, id)
        await recordAudit(trx, { actor, action: 'webhook.deleted', target: id, detail: { url: found.url } })
      })
    },

    /** Lets a disabled endpoint (410 Gone) receive events again. */
    async enable(id: string, actor: Actor = 'cli'): Promise<WebhookEndpoint> {
      return db.transaction().execute(async (trx) => {
        if (!(await activateEndpoint(trx, id))) throw new NotFoundError(`Webhook endpoint '${id}' not found`)
        await recordAudit(trx, { actor, action: 'webhook.enabled', target: id })
        const enabled = await findEndpoint(trx, id)
        if (!enabled) throw new NotFoundError(`Webhook endpoint '${id}' not found`)
        return toEndpoint(enabled)
      })
    },

    /**
     * Gives an endpoint a new secret, returned this once; the old one keeps signing beside it for
     * 24 hours, so receivers can switch without losing a delivery.
     */
    async rotateSecret(id: string, actor: Actor = 'cli'): Promise<{ secret: string; previousUntil: string }> {
      const secret = newSigningSecret()
      const sealed = box().seal(secret)
      const previousUntil = formatTimestamp(new Date(clock() + ROTATION_OVERLAP_MS))
      await db.transaction().execute(async (trx) => {
        const found = await findEndpoint(trx, id)
        if (!found) throw new NotFoundError(`Webhook endpoint '${id}' not found`)
        await replaceEndpointSecret(trx, id, { sealed, previous: found.secret, until: previousUntil })
        await recordAudit(trx, {
          actor,
          action: 'webhook.secret_rotated',
          target: id,
          detail: { previousSecretUntil: previousUntil },
        })
      })
      return { secret, previousUntil }
    },

    /** The endpoint's deliveries, newest first. */
    async deliveries(id: string, limit = 20): Promise<WebhookDelivery[]> {
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new ValidationError('The limit must be an integer from 1 to 1000')
      await row(id)
      const rows = await listDeliveriesTo(db, id, limit)
      return rows.map((r) => ({
        eventId: r.event_id,
        type: r.type,
        status: r.status,
        attempts: Number(r.attempts),
        lastStatus: r.last_status,
        responseCode: r.response_code === null ? null : Number(r.response_code),
        durationMs: r.duration_ms === null ? null : Number(r.duration_ms),
        nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
        deliveredAt: r.delivered_at,
        createdAt: r.created_at,
      }))
    },

    /**
     * Sends an event to an endpoint again (or for the first time, for an event from before it
     * existed): the delivery is due now, with three more days of retries.
     */
    async resend(eventId: string, endpointId: string, actor: Actor = 'cli'): Promise<void> {
      const at = clock()
      const now = formatTimestamp(new Date(at))
      const expires = formatTimestamp(new Date(at + RETRY_WINDOW_MS))
      await db.transaction().execute(async (trx) => {
        const endpoint = await findEndpoint(trx, endpointId)
        if (!endpoint) throw new NotFoundError(`Webhook endpoint '${endpointId}' not found`)
        if (endpoint.status === 'disabled')
          throw new ValidationError(`Webhook endpoint '${endpointId}' is disabled: enable it first`)
        if (!(await eventExists(trx, eventId))) throw new NotFoundError(`Event '${eventId}' not found`)
        await scheduleWebhookDelivery(trx, { eventId, endpointId, now, expiresAt: expires })
        await recordAudit(trx, { actor, action: 'webhook.resent', target: endpointId, detail: { eventId } })
      })
      outboxWritten()
    },
  }
}

export type WebhookService = ReturnType<typeof createWebhookService>
