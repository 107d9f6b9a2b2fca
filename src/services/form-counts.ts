import { type Kysely, sql } from 'kysely'
import { createContentCache } from '../db/content-version.js'
import type { Database } from '../db/tables.js'

/** How many submissions a form has, and how many of them are unread. */
export interface FormCounts {
  total: number
  unread: number
}

/**
 * The submission counts of forms, as the dashboard shows them beside each form. Counting a busy form
 * reads every one of its index entries (a million, for some), so counts are kept per content version
 * and only the forms not kept are counted, all in one grouped read.
 */
export function createFormCounts(db: Kysely<Database>) {
  const kept = createContentCache<FormCounts>(db)
  return async (ids: readonly string[]): Promise<Map<string, FormCounts>> => {
    const version = await kept.version()
    const missing = ids.filter((id) => kept.peek(id, version) === undefined)
    if (missing.length > 0) {
      const rows = await db
        .selectFrom('submissions')
        .select((eb) => [
          'submissions.form_id',
          eb.fn.countAll<number | string | bigint>().as('total'),
          eb.fn
            .sum<number | string | bigint | null>(
              sql`case when ${sql.ref('submissions.is_read')} = 0 then 1 else 0 end`,
            )
            .as('unread'),
        ])
        .where('submissions.form_id', 'in', missing)
        .groupBy('submissions.form_id')
        .execute()
      const counted = new Map(rows.map((row) => [row.form_id, row]))
      for (const id of missing)
        kept.set(id, version, {
          total: Number(counted.get(id)?.total ?? 0),
          unread: Number(counted.get(id)?.unread ?? 0),
        })
    }
    return new Map(ids.map((id) => [id, kept.peek(id, version) ?? { total: 0, unread: 0 }]))
  }
}
