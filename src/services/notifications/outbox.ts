import { type ExpressionBuilder, type Kysely, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely'
import { dialectOf } from '../../db/database.js'
import type { ContentKind, Database, NotificationEventType } from '../../db/tables.js'
import { randomBase62 } from '../../ids.js'
import { formatTimestamp } from '../../time.js'

/**
 * The outbox: events and their deliveries, written in the transaction of the change that causes
 * them (a submission stored, content changed), so that a notification exists exactly when its
 * change committed. Nothing is written when nothing would receive it: an import of a million
 * submissions with no endpoint and no notified form costs two indexed reads.
 */

export const EVENT_TYPES = [
  'submission.created',
  'content.changed',
] as const satisfies readonly NotificationEventType[]

/** How long a delivery is retried after its event (or after a resend). */
export const RETRY_WINDOW_MS = 3 * 86_400_000

/** A new event id: `evt_` and 24 random base62 characters. */
export function newEventId(): string {
  return `evt_${randomBase62(24)}`
}

/** SQL for a new event id per row, for events written by `INSERT … SELECT`. */
function eventIdSql(db: Kysely<Database>): RawBuilder<string> {
  return dialectOf(db as unknown as Kysely<unknown>) === 'postgres'
    ? sql<string>`'evt_' || replace(gen_random_uuid()::text, '-', '')`
    : sql<string>`'evt_' || lower(hex(randomblob(16)))`
}

/** Which forms' new submissions something would receive: every form, some, or none (null). */
export interface SubmissionTargets {
  allForms: boolean
  forms: Set<string>
}

// Constant LIKE patterns are written into the SQL, not bound: SQLite prepares a statement again
// on every run whose LIKE pattern is a parameter (the pattern might allow an index). That was 35 µs
// of the 43 µs the intake's form read took per post.
const LIKE_SUBMISSION_CREATED = sql.lit('%"submission.created"%')
const LIKE_CONTENT_CHANGED = sql.lit('%"content.changed"%')
const LIKE_NOTIFY_EMAILS = sql.lit('%"notifyEmails":["%')

/** Narrows a query of endpoints to those listening to new submissions. */
const listening = <O>(query: SelectQueryBuilder<Database, 'webhook_endpoints', O>) =>
  query
    .where('webhook_endpoints.status', '=', 'active')
    .where('webhook_endpoints.events', 'like', LIKE_SUBMISSION_CREATED)

/** The endpoints listening to new submissions: `form_id` null for those of every form. */
const listeningEndpoints = (db: Kysely<Database>) =>
  listening(db.selectFrom('webhook_endpoints').select('form_id'))

/** Whether a form's new submissions reach anyone, read with the form (`formListenerColumns`). */
export interface FormListeners {
  /** An endpoint listens to the new submissions of every form. */
  allForms: boolean
  /** An endpoint listens to this form's, or the form has addresses to notify. */
  thisForm: boolean
}

/**
 * Columns to select beside a row of `forms` that tell its `FormListeners` (`listened_all`,
 * `listened_form`): a post reads who listens in its form's own statement instead of a second one.
 */
export function formListenerColumns(eb: ExpressionBuilder<Database, 'forms'>) {
  const endpoints = () => listening(eb.selectFrom('webhook_endpoints').select('webhook_endpoints.id'))
  return [
    eb.exists(endpoints().where('webhook_endpoints.form_id', 'is', null)).as('listened_all'),
    eb
      .or([
        eb.exists(endpoints().where('webhook_endpoints.form_id', '=', eb.ref('forms.id'))),
        eb('forms.intake', 'like', LIKE_NOTIFY_EMAILS),
      ])
      .as('listened_form'),
  ] as const
}

/**
 * True while no endpoint listens to the new submissions of `formId` (or of every form): the check a
 * plain post's insert makes (`services/intake.ts`). A form's own addresses to notify are in its
 * settings, which the forms version the insert also checks covers.
 */
export function nobodyListens(eb: ExpressionBuilder<Database, never>, formId: unknown) {
  return eb.not(
    eb.exists(
      listening(eb.selectFrom('webhook_endpoints').select('webhook_endpoints.id')).where((inner) =>
        inner.or([
          inner('webhook_endpoints.form_id', 'is', null),
          inner('webhook_endpoints.form_id', '=', formId as string),
        ]),
      ),
    ),
  )
}

/** Nobody listens: what a caught post needs, since spam notifies no one. */
export const NO_LISTENERS: FormListeners = { allForms: false, thisForm: false }

/** A form's listeners from the columns of `formListenerColumns` (0/1 on SQLite, booleans on PostgreSQL). */
export function formListenersOf(row: { listened_all: unknown; listened_form: unknown }): FormListeners {
  return { allForms: Boolean(Number(row.listened_all)), thisForm: Boolean(Number(row.listened_form)) }
}

/** The targets of posts whose forms' listeners were read with each form; null when none listens. */
export function targetsOfListeners(
  posts: readonly { formId: string; listeners: FormListeners }[],
): SubmissionTargets | null {
  const allForms = posts.some((post) => post.listeners.allForms)
  const forms = new Set(posts.flatMap((post) => (post.listeners.thisForm ? [post.formId] : [])))
  return allForms || forms.size > 0 ? { allForms, forms } : null
}

/** The forms with addresses to email of each new submission. */
const emailedForms = (db: Kysely<Database>) =>
  db.selectFrom('forms').select('id as form_id').where('intake', 'like', LIKE_NOTIFY_EMAILS)

function targetsOf(
  endpoints: readonly { form_id: string | null }[],
  emailed: readonly { form_id: string }[],
): SubmissionTargets | null {
  if (endpoints.length === 0 && emailed.length === 0) return null
  return {
    allForms: endpoints.some((endpoint) => endpoint.form_id === null),
    forms: new Set([
      ...endpoints.flatMap((endpoint) => (endpoint.form_id === null ? [] : [endpoint.form_id])),
      ...emailed.map((form) => form.form_id),
    ]),
  }
}

/**
 * The forms whose new submissions an endpoint or an email would receive, or null for none; with
 * `formIds`, only whether those forms' would (posts ask for their own forms alone).
 */
export async function submissionTargets(
  db: Kysely<Database>,
  formIds?: readonly string[],
): Promise<SubmissionTargets | null> {
  const endpoints = await listeningEndpoints(db).execute()
  const emailed =
    formIds?.length === 0
      ? []
      : await emailedForms(db)
          .$if(formIds !== undefined, (q) => q.where('id', 'in', formIds as readonly string[]))
          .execute()
  return targetsOf(endpoints, emailed)
}

/**
 * Writes a `submission.created` event for each of the stored submissions `ids` (all new, none
 * spam) whose form something listens to, and its deliveries: one per matching active endpoint, one
 * email when the form has addresses to notify. Run it in the transaction that stored them.
 */
export async function recordSubmissionsCreated(
  trx: Kysely<Database>,
  ids: readonly string[],
  targets: SubmissionTargets | null,
  at: Date = new Date(),
): Promise<number> {
  if (targets === null || ids.length === 0) return 0
  if (!targets.allForms && targets.forms.size === 0) return 0
  const created = formatTimestamp(at)
  const result = await trx
    .insertInto('notification_events')
    .columns(['id', 'type', 'form_id', 'submission_id', 'data', 'created_at'])
    .expression(
      trx
        .selectFrom('submissions')
        .select([
          eventIdSql(trx).as('id'),
          sql<string>`'submission.created'`.as('type'),
          'form_id',
          'id as submission_id',
          'json',
          sql<string>`${created}`.as('created_at'),
        ])
        .where('id', 'in', ids)
        .$if(!targets.allForms, (q) => q.where('form_id', 'in', [...targets.forms])),
    )
    .executeTakeFirst()
  const inserted = Number(result.numInsertedOrUpdatedRows ?? 0)
  if (inserted === 0) return 0
  await addDeliveries(trx, created, (eb) =>
    eb
      .where('e.submission_id', 'in', ids)
      .where('e.type', '=', 'submission.created')
      .where('e.created_at', '=', created),
  )
  return inserted
}

/**
 * The same for the submissions of a bulk load that are new: those of `table` (a staging table with
 * `id` and `existed`) whose `existed` is 0, already moved into `submissions`.
 */
export async function recordStagedSubmissionsCreated(
  trx: Kysely<Database>,
  table: string,
  targets: SubmissionTargets | null,
  at: Date = new Date(),
): Promise<void> {
  if (targets === null) return
  if (!targets.allForms && targets.forms.size === 0) return
  const created = formatTimestamp(at)
  const staged = sql.table(table)
  const formFilter = targets.allForms ? sql`true` : sql`s.form_id in (${sql.join([...targets.forms])})`
  await sql`insert into notification_events (id, type, form_id, submission_id, data, created_at)
    select ${eventIdSql(trx)}, 'submission.created', s.form_id, s.id, s.json, ${created}
    from ${staged} as st join submissions as s on s.id = st.id
    where st.existed = 0 and ${formFilter}`.execute(trx)
  // Every event of this load has this type and time; so may one that a post committed in the same
  // second, whose deliveries exist already and are left alone (`on conflict do nothing`). No join
  // with the stage: it has no statistics, and PostgreSQL then plans a nested loop over both.
  await addDeliveries(trx, created, (eb) =>
    eb.where('e.type', '=', 'submission.created').where('e.created_at', '=', created),
  )
}

type EventFilter = Parameters<typeof addDeliveries>[2]

/** Writes the deliveries of the events `filter` selects (aliased `e`): webhooks, then emails. */
async function addDeliveries(
  trx: Kysely<Database>,
  at: string,
  // biome-ignore lint/suspicious/noExplicitAny: a where-builder over the aliased events table
  filter: (query: any) => any,
): Promise<void> {
  const expires = formatTimestamp(new Date(Date.parse(at) + RETRY_WINDOW_MS))
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

/** Writes a `content.changed` event naming `kinds`, with a delivery per listening endpoint. */
export async function recordContentChanged(
  trx: Kysely<Database>,
  kinds: readonly ContentKind[],
  at: Date = new Date(),
): Promise<string | null> {
  const listening = await trx
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('status', '=', 'active')
    .where('events', 'like', LIKE_CONTENT_CHANGED)
    .limit(1)
    .execute()
  if (listening.length === 0) return null
  const id = newEventId()
  const created = formatTimestamp(at)
  await trx
    .insertInto('notification_events')
    .values({
      id,
      type: 'content.changed',
      form_id: null,
      submission_id: null,
      data: JSON.stringify({ kinds }),
      created_at: created,
    })
    .execute()
  await addDeliveries(trx, created, (eb) => eb.where('e.id', '=', id))
  return id
}

/** Wakes this process's delivery workers soon after a commit wrote deliveries, instead of at their next poll. */
const wakers = new Set<() => void>()
export function onOutboxWritten(waker: () => void): () => void {
  wakers.add(waker)
  return () => wakers.delete(waker)
}
export function outboxWritten(): void {
  for (const wake of wakers) wake()
}

export type { EventFilter }
