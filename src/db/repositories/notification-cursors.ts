import type { Executor } from '../executor.js'
import type { ContentKind } from '../tables.js'

/**
 * The notification_cursors table's SQL: the content versions the last `content.changed` event
 * covered, for the worker's content check (`services/notifications/content-check.ts`).
 */

/** The version of each kind, as the last `content.changed` covered it (none before the first). */
export async function readNotificationCursors(db: Executor): Promise<Map<ContentKind, number>> {
  const rows = await db.selectFrom('notification_cursors').select(['kind', 'version']).execute()
  return new Map(rows.map((row) => [row.kind, Number(row.version)]))
}

/** Stores that the last `content.changed` covered `kind` up to `version`. */
export async function saveNotificationCursor(
  trx: Executor,
  kind: ContentKind,
  version: number | string,
): Promise<void> {
  await trx
    .insertInto('notification_cursors')
    .values({ kind, version })
    .onConflict((conflict) => conflict.column('kind').doUpdateSet({ version }))
    .execute()
}
