import type { Kysely, Transaction } from 'kysely'
import type { Database, WebhookEndpointsTable } from '../tables.js'

/**
 * The webhook_endpoints table's SQL, for the webhook service and the delivery worker
 * (`services/notifications/`): the endpoints, their secrets, and each endpoint's record of
 * successes and failures.
 */

export type Executor = Kysely<Database> | Transaction<Database>

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
