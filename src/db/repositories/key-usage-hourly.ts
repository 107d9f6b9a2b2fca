import { type Kysely, type Selectable, sql } from 'kysely'
import type { Database, KeyUsageHourlyTable } from '../tables.js'

/** The key_usage_hourly table's SQL, for the usage counter (`services/usage.ts`). */

/** Rows per upsert statement: four parameters each, well under every driver's limit. */
const UPSERT_BATCH = 500

/** Adds each row's counts to those stored for its key and hour, in a few upserts. */
export async function addUsageCounts(
  db: Kysely<Database>,
  rows: readonly Selectable<KeyUsageHourlyTable>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += UPSERT_BATCH) {
    await db
      .insertInto('key_usage_hourly')
      .values(rows.slice(i, i + UPSERT_BATCH))
      .onConflict((conflict) =>
        conflict.columns(['key_id', 'hour']).doUpdateSet({
          requests: sql`${sql.ref('key_usage_hourly.requests')} + ${sql.ref('excluded.requests')}`,
          rejected: sql`${sql.ref('key_usage_hourly.rejected')} + ${sql.ref('excluded.rejected')}`,
        }),
      )
      .execute()
  }
}

/** Key `keyId`'s stored counts for the hours from `fromHour` on (hour stamps, canonical UTC). */
export function usageOfKeySince(db: Kysely<Database>, keyId: string, fromHour: string) {
  return db
    .selectFrom('key_usage_hourly')
    .select(['hour', 'requests', 'rejected'])
    .where('key_id', '=', keyId)
    .where('hour', '>=', fromHour)
    .execute()
}

/** Every key's stored requests and 429s, summed, for the hours from `fromHour` on. */
export async function totalUsageSince(
  db: Kysely<Database>,
  fromHour: string,
): Promise<{ requests: number; rejected: number }> {
  const row = await db
    .selectFrom('key_usage_hourly')
    .select((eb) => [
      eb.fn.sum<number | string | null>('requests').as('requests'),
      eb.fn.sum<number | string | null>('rejected').as('rejected'),
    ])
    .where('hour', '>=', fromHour)
    .executeTakeFirstOrThrow()
  return { requests: Number(row.requests ?? 0), rejected: Number(row.rejected ?? 0) }
}
