import type { DatabaseHandle } from '../../db/database.js'
import { anyDeliveryDue, claimDueDeliveries } from '../../db/repositories/notification-deliveries.js'
import { findEventsByIds } from '../../db/repositories/notification-events.js'
import { findEndpointsByIds } from '../../db/repositories/webhook-endpoints.js'
import type {
  NotificationDeliveriesTable,
  NotificationEventsTable,
  WebhookEndpointsTable,
} from '../../db/tables.js'
import { formatTimestamp } from '../../time.js'

/** A delivery this worker holds, and the lease it holds it under until. */
export interface Claimed {
  delivery: NotificationDeliveriesTable
  lease: string
}

/** The events and endpoints of a claimed batch, by id. */
export interface ClaimedBatch {
  events: Map<string, NotificationEventsTable>
  endpoints: Map<string, WebhookEndpointsTable>
}

/**
 * Claims up to `limit` deliveries due at `at` for this worker, each leased for `leaseMs`; none when
 * nothing is due or another instance holds them. An expired lease makes a delivery due again, so
 * one abandoned by a stopped worker is attempted again.
 */
export async function claimDue(
  database: Pick<DatabaseHandle, 'db' | 'dialect'>,
  at: number,
  leaseMs: number,
  limit: number,
): Promise<Claimed[]> {
  const now = formatTimestamp(new Date(at))
  // A read first: an idle poll must not take SQLite's write lock.
  if (!(await anyDeliveryDue(database.db, now))) return []
  const lease = formatTimestamp(new Date(at + leaseMs))
  const rows = await claimDueDeliveries(database.db, database.dialect, now, lease, limit)
  return rows.map((delivery) => ({ delivery, lease }))
}

/** The events and endpoints of a claimed batch, read in two queries rather than two per delivery. */
export async function readClaimedBatch(
  database: Pick<DatabaseHandle, 'db'>,
  claimed: readonly Claimed[],
): Promise<ClaimedBatch> {
  const eventIds = [...new Set(claimed.map((c) => c.delivery.event_id))]
  const endpointIds = [
    ...new Set(claimed.flatMap((c) => (c.delivery.endpoint_id === null ? [] : [c.delivery.endpoint_id]))),
  ]
  return {
    events: await findEventsByIds(database.db, eventIds),
    endpoints: await findEndpointsByIds(database.db, endpointIds),
  }
}
