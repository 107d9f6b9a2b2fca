import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { listEmailedForms } from '../../db/repositories/forms.js'
import {
  insertEventDeliveries,
  insertSubmissionDeliveries,
  insertSubmissionDeliveriesAt,
} from '../../db/repositories/notification-deliveries.js'
import {
  insertContentChangedEvent,
  insertStagedSubmissionCreatedEvents,
  insertSubmissionCreatedEvents,
} from '../../db/repositories/notification-events.js'
import {
  anyEndpointListensToContent,
  listSubmissionListeners,
} from '../../db/repositories/webhook-endpoints.js'
import type { ContentKind, Database, NotificationEventType } from '../../db/tables.js'
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

/**
 * A new event id, made at `at` (ms): `evt_`, the time in 12 hex digits, and 20 random hex digits.
 * Ids sort as they were made, so a list of deliveries is newest first also within one second (its
 * timestamps have whole seconds); the events written in SQL (`insertSubmissionCreatedEvents`) have
 * the same layout.
 */
export function newEventId(at: number = Date.now()): string {
  return `evt_${at.toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`
}

/** When a delivery written at `at` stops being retried: the retry window after it. */
function expiryOf(at: string): string {
  return formatTimestamp(new Date(Date.parse(at) + RETRY_WINDOW_MS))
}

/** Which forms' new submissions something would receive: every form, some, or none (null). */
export interface SubmissionTargets {
  allForms: boolean
  forms: Set<string>
}

/** Whether a form's new submissions reach anyone, read with the form (`formListenerColumns`). */
export interface FormListeners {
  /** An endpoint listens to the new submissions of every form. */
  allForms: boolean
  /** An endpoint listens to this form's, or the form has addresses to notify. */
  thisForm: boolean
}

// Who listens, read with a post's form (`formListenerColumns`) or checked by a plain post's insert
// (`nobodyListens`): query fragments of the endpoints' repository, for the intake.
export { formListenerColumns, nobodyListens } from '../../db/repositories/webhook-endpoints.js'

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

/** The forms of `targets` whose submissions' events to write: null for every form. */
function formsOf(targets: SubmissionTargets): readonly string[] | null {
  return targets.allForms ? null : [...targets.forms]
}

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
  const endpoints = await listSubmissionListeners(db)
  const emailed = formIds?.length === 0 ? [] : await listEmailedForms(db, formIds)
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
  const inserted = await insertSubmissionCreatedEvents(trx, ids, formsOf(targets), created)
  if (inserted === 0) return 0
  await insertSubmissionDeliveries(trx, ids, created, expiryOf(created))
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
  await insertStagedSubmissionCreatedEvents(trx, table, formsOf(targets), created)
  // Every event of this load has this type and time (see `insertSubmissionDeliveriesAt`).
  await insertSubmissionDeliveriesAt(trx, created, expiryOf(created))
}

/** Writes a `content.changed` event naming `kinds`, with a delivery per listening endpoint. */
export async function recordContentChanged(
  trx: Kysely<Database>,
  kinds: readonly ContentKind[],
  at: Date = new Date(),
): Promise<string | null> {
  if (!(await anyEndpointListensToContent(trx))) return null
  const id = newEventId(at.getTime())
  const created = formatTimestamp(at)
  await insertContentChangedEvent(trx, id, kinds, created)
  await insertEventDeliveries(trx, id, created, expiryOf(created))
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

export type { EventFilter } from '../../db/repositories/notification-deliveries.js'
