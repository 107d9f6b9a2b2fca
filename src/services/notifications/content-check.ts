import type { Kysely } from 'kysely'
import { readKindVersions } from '../../db/content-version.js'
import { takeLockIfIdle } from '../../db/locks.js'
import {
  readNotificationCursors,
  saveNotificationCursor,
} from '../../db/repositories/notification-cursors.js'
import type { ContentKind, Database } from '../../db/tables.js'
import { outboxWritten, recordContentChanged } from './outbox.js'

const KINDS: readonly ContentKind[] = ['forms', 'pages', 'redirects']

/** The kinds whose version moved since the last `content.changed`, and the versions read. */
async function movedKinds(db: Kysely<Database>) {
  const current = await readKindVersions(db)
  const seen = await readNotificationCursors(db)
  return {
    current,
    kinds: KINDS.filter((kind) => {
      const row = current.find((c) => c.kind === kind)
      return row !== undefined && Number(row.version) !== seen.get(kind)
    }),
  }
}

/**
 * Emits one `content.changed` naming the kinds whose version moved since the last event, when any
 * did and the last was at least `coalesceMs` ago (by `clock`). The lease on the `notifications` lock row
 * makes one instance at a time do it; the versions it covered are stored with the event, so a
 * restart neither repeats nor loses a change. Returns the kinds it named, or null for no event.
 */
export async function checkContentChanged(
  db: Kysely<Database>,
  clock: () => number,
  coalesceMs: number,
): Promise<ContentKind[] | null> {
  if ((await movedKinds(db)).kinds.length === 0) return null
  const at = clock()
  const result = await db.transaction().execute(async (trx) => {
    if (!(await takeLockIfIdle(trx, 'notifications', at, coalesceMs))) return null
    const { current, kinds } = await movedKinds(trx)
    if (kinds.length === 0) return null
    await recordContentChanged(trx, kinds, new Date(at))
    for (const row of current) await saveNotificationCursor(trx, row.kind, row.version)
    return kinds
  })
  if (result) outboxWritten()
  return result
}
