import { type RawBuilder, sql } from 'kysely'
import type { Executor } from '../executor.js'
import type { DialectName } from '../handle.js'
import type { NotificationDeliveriesTable } from '../tables.js'
import { LIKE_NOTIFY_EMAILS } from './webhook-endpoints.js'

/**
 * The notification_deliveries table's SQL, for the outbox and the delivery worker
 * (`services/notifications/`): writing the deliveries of new events, claiming due deliveries under
 * a lease, and recording attempts. A delivery is due when it is pending, its `next_attempt_at` has
 * come and no live lease (`claimed_until`) holds it.
 */

export type DeliveryStatus = NotificationDeliveriesTable['status']

/** A where-builder over the events (aliased `e`) whose deliveries to write. */
// biome-ignore lint/suspicious/noExplicitAny: a where-builder over the aliased events table
export type EventFilter = (query: any) => any

/**
 * Writes the deliveries of the events `filter` selects (aliased `e`), pending from `at` and expiring
 * at `expires`: webhooks, then emails.
 */
async function insertDeliveries(
  trx: Executor,
  at: string,
  expires: string,
  filter: EventFilter,
): Promise<void> {
  const common = {
    status: sql<string>`'pending'`.as('status'),
    attempts: sql<number>`0`.as('attempts'),
    next: sql<string>`${at}`.as('next_attempt_at'),
    expires: sql<string>`${expires}`.as('expires_at'),
    created: sql<string>`${at}`.as('created_at'),
    updated: sql<string>`${at}`.as('updated_at'),
  }
  const columns = [
    'id',
    'event_id',
    'endpoint_id',
    'channel',
    'status',
    'attempts',
    'next_attempt_at',
    'expires_at',
    'created_at',
    'updated_at',
  ] as const
  await trx
    .insertInto('notification_deliveries')
    .columns(columns)
    .expression(
      filter(
        trx
          .selectFrom('notification_events as e')
          .innerJoin('webhook_endpoints as w', (join) =>
            join.on((eb) =>
              eb.and([
                eb('w.status', '=', 'active'),
                eb('w.events', 'like', sql<string>`'%"' || e.type || '"%'`),
                eb.or([
                  eb('w.form_id', 'is', null),
                  eb('e.type', '<>', 'submission.created'),
                  eb('w.form_id', '=', eb.ref('e.form_id')),
                ]),
              ]),
            ),
          )
          .select([
            sql<string>`e.id || ':' || w.id`.as('id'),
            'e.id as event_id',
            'w.id as endpoint_id',
            sql<string>`'webhook'`.as('channel'),
            ...Object.values(common),
          ]),
      ),
    )
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute()
  await trx
    .insertInto('notification_deliveries')
    .columns(columns)
    .expression(
      filter(
        trx
          .selectFrom('notification_events as e')
          .innerJoin('forms as f', 'f.id', 'e.form_id')
          .where('e.type', '=', 'submission.created')
          .where('f.intake', 'like', LIKE_NOTIFY_EMAILS)
          .select([
            sql<string>`e.id || ':email'`.as('id'),
            'e.id as event_id',
            sql<null>`null`.as('endpoint_id'),
            sql<string>`'email'`.as('channel'),
            ...Object.values(common),
          ]),
      ),
    )
    .onConflict((conflict) => conflict.column('id').doNothing())
    .execute()
}

/** Writes the deliveries of the `submission.created` events of submissions `ids` created at `at`. */
export async function insertSubmissionDeliveries(
  trx: Executor,
  ids: readonly string[],
  at: string,
  expires: string,
): Promise<void> {
  await insertDeliveries(trx, at, expires, (eb) =>
    eb
      .where('e.submission_id', 'in', ids)
      .where('e.type', '=', 'submission.created')
      .where('e.created_at', '=', at),
  )
}

/**
 * Writes the deliveries of every `submission.created` event created at `at`: those of a bulk load.
 * Every event of the load has this type and time; so may one that a post committed in the same
 * second, whose deliveries exist already and are left alone (`on conflict do nothing`). No join
 * with the stage: it has no statistics, and PostgreSQL then plans a nested loop over both.
 */
export async function insertSubmissionDeliveriesAt(
  trx: Executor,
  at: string,
  expires: string,
): Promise<void> {
  await insertDeliveries(trx, at, expires, (eb) =>
    eb.where('e.type', '=', 'submission.created').where('e.created_at', '=', at),
  )
}

/** Writes the deliveries of event `id`, created at `at`. */
export async function insertEventDeliveries(
  trx: Executor,
  id: string,
  at: string,
  expires: string,
): Promise<void> {
  await insertDeliveries(trx, at, expires, (eb) => eb.where('e.id', '=', id))
}

/** Whether any delivery is due at `now`: a read, so an idle poll does not take SQLite's write lock. */
export async function anyDeliveryDue(db: Executor, now: string): Promise<boolean> {
  const due = await db
    .selectFrom('notification_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
    .limit(1)
    .execute()
  return due.length > 0
}

/**
 * Leases up to `limit` deliveries due at `now` until `lease`, soonest first, and returns them. On
 * PostgreSQL rows another worker is claiming are skipped (`skip locked`) rather than waited for.
 */
export async function claimDueDeliveries(
  db: Executor,
  dialect: DialectName,
  now: string,
  lease: string,
  limit: number,
): Promise<NotificationDeliveriesTable[]> {
  const skipLocked = dialect === 'postgres' ? sql`for update skip locked` : sql``
  const rows = await sql<NotificationDeliveriesTable>`update notification_deliveries
    set claimed_until = ${lease}
    where id in (select id from notification_deliveries
      where status = 'pending' and next_attempt_at <= ${now} and (claimed_until is null or claimed_until <= ${now})
      order by next_attempt_at limit ${limit} ${skipLocked})
    returning *`.execute(db)
  return rows.rows
}

/** What one attempt leaves on its delivery (see {@link recordDeliveryAttempts}). */
export interface DeliveryAttempt {
  id: string
  /** The lease the attempt was made under: an attempt whose lease was lost is not recorded. */
  lease: string
  status: DeliveryStatus
  attempts: number
  lastStatus: string
  responseCode: number | null
  durationMs: number
  lastError: string | null
  nextAttemptAt: string
  deliveredAt: string | null
  updatedAt: string
}

/** A value typed the same way in both dialects inside a `union all` of literal rows. */
const text = (value: string | null) => sql`cast(${value} as text)`
const integer = (value: number | null) => sql`cast(${value} as integer)`

/**
 * Records attempts on their deliveries and releases their leases, in one statement for the whole
 * batch: a round trip per delivery is what PostgreSQL would wait on.
 */
export async function recordDeliveryAttempts(
  trx: Executor,
  attempts: readonly DeliveryAttempt[],
): Promise<void> {
  if (attempts.length === 0) return
  const rows: RawBuilder<unknown>[] = attempts.map(
    (a) =>
      sql`select ${text(a.id)} as id, ${text(a.lease)} as lease, ${text(a.status)} as status,
        ${integer(a.attempts)} as attempts, ${text(a.lastStatus)} as last_status,
        ${integer(a.responseCode)} as response_code, ${integer(a.durationMs)} as duration_ms,
        ${text(a.lastError)} as last_error, ${text(a.nextAttemptAt)} as next_attempt_at,
        ${text(a.deliveredAt)} as delivered_at, ${text(a.updatedAt)} as updated_at`,
  )
  await sql`update notification_deliveries set status = v.status, attempts = v.attempts,
      last_status = v.last_status, response_code = v.response_code, duration_ms = v.duration_ms,
      last_error = v.last_error, next_attempt_at = v.next_attempt_at, delivered_at = v.delivered_at,
      claimed_until = null, updated_at = v.updated_at
    from (${sql.join(rows, sql` union all `)}) as v
    where notification_deliveries.id = v.id and notification_deliveries.claimed_until = v.lease`.execute(trx)
}

/** Fails, at `at`, every delivery still pending to endpoint `endpointId` (it was disabled). */
export async function failPendingDeliveriesTo(trx: Executor, endpointId: string, at: string): Promise<void> {
  await trx
    .updateTable('notification_deliveries')
    .set({ status: 'failed', last_status: 'endpoint_disabled', claimed_until: null, updated_at: at })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute()
}

/** Deletes every delivery to endpoint `endpointId` (the endpoint is being removed). */
export async function deleteDeliveriesTo(trx: Executor, endpointId: string): Promise<void> {
  await trx.deleteFrom('notification_deliveries').where('endpoint_id', '=', endpointId).execute()
}

/** The newest `limit` deliveries to endpoint `endpointId`, with their event's type. */
export function listDeliveriesTo(db: Executor, endpointId: string, limit: number) {
  return db
    .selectFrom('notification_deliveries as d')
    .innerJoin('notification_events as e', 'e.id', 'd.event_id')
    .select([
      'd.event_id',
      'e.type',
      'd.status',
      'd.attempts',
      'd.last_status',
      'd.response_code',
      'd.duration_ms',
      'd.next_attempt_at',
      'd.delivered_at',
      'd.created_at',
    ])
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.event_id', 'desc')
    .limit(limit)
    .execute()
}

/**
 * Makes event `eventId`'s webhook delivery to `endpointId` due at `now`, expiring at `expiresAt`:
 * a new delivery, or the existing one made pending again (its attempts kept).
 */
export async function scheduleWebhookDelivery(
  trx: Executor,
  delivery: { eventId: string; endpointId: string; now: string; expiresAt: string },
): Promise<void> {
  const { eventId, endpointId, now, expiresAt } = delivery
  const fresh = {
    status: 'pending' as const,
    next_attempt_at: now,
    claimed_until: null,
    expires_at: expiresAt,
    updated_at: now,
  }
  await trx
    .insertInto('notification_deliveries')
    .values({
      id: `${eventId}:${endpointId}`,
      event_id: eventId,
      endpoint_id: endpointId,
      channel: 'webhook',
      attempts: 0,
      created_at: now,
      ...fresh,
    })
    .onConflict((conflict) => conflict.column('id').doUpdateSet(fresh))
    .execute()
}
