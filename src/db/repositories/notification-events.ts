import { type Kysely, type RawBuilder, sql } from 'kysely'
import { dialectOf } from '../database.js'
import type { Executor } from '../executor.js'
import type { ContentKind, NotificationEventsTable } from '../tables.js'

/**
 * The notification_events table's SQL, for the outbox (`services/notifications/outbox.ts`), the
 * delivery worker and the webhook service.
 */

/**
 * SQL for a new event id per row, for events written by `INSERT … SELECT`, laid out as
 * `newEventId` lays it out: the milliseconds since 1970 in 12 hex digits, then 20 random ones.
 */
function eventIdSql(db: Executor): RawBuilder<string> {
  return dialectOf(db as unknown as Kysely<unknown>) === 'postgres'
    ? sql<string>`'evt_' || lpad(to_hex(floor(extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0') || right(replace(gen_random_uuid()::text, '-', ''), 20)`
    : sql<string>`'evt_' || printf('%012x', cast((julianday('now') - 2440587.5) * 86400000 as integer)) || lower(hex(randomblob(10)))`
}

/**
 * Writes, created at `created`, a `submission.created` event for each of the submissions `ids` that
 * belongs to one of `forms` (to any form when null); returns how many it wrote.
 */
export async function insertSubmissionCreatedEvents(
  trx: Executor,
  ids: readonly string[],
  forms: readonly string[] | null,
  created: string,
): Promise<number> {
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
        .$if(forms !== null, (q) => q.where('form_id', 'in', forms as readonly string[])),
    )
    .executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0)
}

/**
 * The same for the submissions of a bulk load that are new: those of `table` (a staging table with
 * `id` and `existed`) whose `existed` is 0, already moved into `submissions`.
 */
export async function insertStagedSubmissionCreatedEvents(
  trx: Executor,
  table: string,
  forms: readonly string[] | null,
  created: string,
): Promise<void> {
  const staged = sql.table(table)
  const formFilter = forms === null ? sql`true` : sql`s.form_id in (${sql.join(forms)})`
  await sql`insert into notification_events (id, type, form_id, submission_id, data, created_at)
    select ${eventIdSql(trx)}, 'submission.created', s.form_id, s.id, s.json, ${created}
    from ${staged} as st join submissions as s on s.id = st.id
    where st.existed = 0 and ${formFilter}`.execute(trx)
}

/** Writes the `content.changed` event `id` naming `kinds`, created at `created`. */
export async function insertContentChangedEvent(
  trx: Executor,
  id: string,
  kinds: readonly ContentKind[],
  created: string,
): Promise<void> {
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
}

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
