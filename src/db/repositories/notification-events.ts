import type { Kysely, Transaction } from 'kysely'
import type { Database, NotificationEventsTable } from '../tables.js'

/** The notification_events table's SQL, for the delivery worker and the webhook service. */

export type Executor = Kysely<Database> | Transaction<Database>

/** The events among `ids` that exist, by id. */
export async function findEventsByIds(
  db: Executor,
  ids: readonly string[],
): Promise<Map<string, NotificationEventsTable>> {
  if (ids.length === 0) return new Map()
  const events = await db.selectFrom('notification_events').selectAll().where('id', 'in', ids).execute()
  return new Map(events.map((event) => [event.id, event]))
}

/** Whether event `id` exists. */
export async function eventExists(db: Executor, id: string): Promise<boolean> {
  return (
    (await db.selectFrom('notification_events').select('id').where('id', '=', id).executeTakeFirst()) !==
    undefined
  )
}
