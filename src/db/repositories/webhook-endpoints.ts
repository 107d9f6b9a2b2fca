import { type ExpressionBuilder, type SelectQueryBuilder, sql } from 'kysely'
import type { Executor } from '../executor.js'
import type { Database, WebhookEndpointsTable } from '../tables.js'

/**
 * The webhook_endpoints table's SQL, for the webhook service and the delivery worker
 * (`services/notifications/`): the endpoints, their secrets, and each endpoint's record of
 * successes and failures.
 */

// Constant LIKE patterns are written into the SQL, not bound: SQLite prepares a statement again
// on every run whose LIKE pattern is a parameter (the pattern might allow an index). That was 35 µs
// of the 43 µs the intake's form read took per post.
const LIKE_SUBMISSION_CREATED = sql.lit('%"submission.created"%')
const LIKE_CONTENT_CHANGED = sql.lit('%"content.changed"%')
/** Matches the `intake` settings of a form with addresses to notify of its new submissions. */
export const LIKE_NOTIFY_EMAILS = sql.lit('%"notifyEmails":["%')

/** Narrows a query of endpoints to those listening to new submissions. */
export const whereListeningToSubmissions = <O>(query: SelectQueryBuilder<Database, 'webhook_endpoints', O>) =>
  query
    .where('webhook_endpoints.status', '=', 'active')
    .where('webhook_endpoints.events', 'like', LIKE_SUBMISSION_CREATED)

/** The endpoints listening to new submissions: `form_id` null for those of every form. */
export function listSubmissionListeners(db: Executor): Promise<{ form_id: string | null }[]> {
  return whereListeningToSubmissions(db.selectFrom('webhook_endpoints').select('form_id')).execute()
}

/**
 * Columns to select beside a row of `forms` that tell its `FormListeners` (`listened_all`,
 * `listened_form`): a post reads who listens in its form's own statement instead of a second one.
 */
export function formListenerColumns(eb: ExpressionBuilder<Database, 'forms'>) {
  const endpoints = () =>
    whereListeningToSubmissions(eb.selectFrom('webhook_endpoints').select('webhook_endpoints.id'))
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
      whereListeningToSubmissions(eb.selectFrom('webhook_endpoints').select('webhook_endpoints.id')).where(
        (inner) =>
          inner.or([
            inner('webhook_endpoints.form_id', 'is', null),
            inner('webhook_endpoints.form_id', '=', formId as string),
          ]),
      ),
    ),
  )
}

/** Whether an active endpoint listens to `content.changed`. */
export async function anyEndpointListensToContent(db: Executor): Promise<boolean> {
  const listening = await db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('status', '=', 'active')
    .where('events', 'like', LIKE_CONTENT_CHANGED)
    .limit(1)
    .execute()
  return listening.length > 0
}

/** The endpoints among `ids` that exist, by id. */
export async function findEndpointsByIds(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, WebhookEndpointsTable>> {
  if (ids.length === 0) return new Map()
  const endpoints = await db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', ids).execute()
  return new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]))
}

/**
 * Records a success at `at` on endpoint `id`: no failures in a row. Written only when it changes
 * something, so a healthy endpoint's deliveries do not each rewrite its row.
 */
export async function recordEndpointSuccess(trx: Executor, id: string, at: string): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set({ consecutive_failures: 0, last_success_at: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('consecutive_failures', '<>', 0), eb('last_success_at', 'is', null)]))
    .execute()
}

/**
 * Records `count` failures at `at` on endpoint `id`: added to its failures in a row, or, when a
 * success came in the same batch (`afterSuccess`), counted from zero.
 */
export async function recordEndpointFailures(
  trx: Executor,
  id: string,
  count: number,
  afterSuccess: boolean,
  at: string,
): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      consecutive_failures: afterSuccess ? count : eb('consecutive_failures', '+', count),
      last_failure_at: at,
    }))
    .where('id', '=', id)
    .execute()
}

export async function disableEndpoint(trx: Executor, id: string): Promise<void> {
  await trx.updateTable('webhook_endpoints').set({ status: 'disabled' }).where('id', '=', id).execute()
}

/** Endpoint `id`, if there is one. */
export function findEndpoint(db: Executor, id: string): Promise<WebhookEndpointsTable | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Every endpoint, oldest first. */
export function listEndpoints(db: Executor): Promise<WebhookEndpointsTable[]> {
  return db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').execute()
}

export async function insertEndpoint(trx: Executor, row: WebhookEndpointsTable): Promise<void> {
  await trx.insertInto('webhook_endpoints').values(row).execute()
}

export async function deleteEndpoint(trx: Executor, id: string): Promise<void> {
  await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute()
}

/** Makes endpoint `id` active with no failures in a row: false when there is no such endpoint. */
export async function activateEndpoint(trx: Executor, id: string): Promise<boolean> {
  const result = await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'active', consecutive_failures: 0 })
    .where('id', '=', id)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Gives endpoint `id` the sealed secret `sealed`, keeping `previous` beside it until `until`. */
export async function replaceEndpointSecret(
  trx: Executor,
  id: string,
  secrets: { sealed: string; previous: string; until: string },
): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set({ secret: secrets.sealed, previous_secret: secrets.previous, previous_secret_until: secrets.until })
    .where('id', '=', id)
    .execute()
}
