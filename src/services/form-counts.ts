import type { Kysely } from 'kysely'
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
      // Two counts, each read from an index alone: all of a form's submissions from
      // (form_id, created_at, id), its unread ones from migration 008's partial index.
      const counted = (unreadOnly: boolean) => {
        let query = db
          .selectFrom('submissions')
          .select((eb) => ['submissions.form_id', eb.fn.countAll<number | string | bigint>().as('n')])
          .where('submissions.form_id', 'in', missing)
        if (unreadOnly) query = query.where('submissions.is_read', '=', 0)
        return query.groupBy('submissions.form_id').execute()
      }
      const [all, unread] = await Promise.all([counted(false), counted(true)])
      const totals = new Map(all.map((row) => [row.form_id, Number(row.n)]))
      const unreads = new Map(unread.map((row) => [row.form_id, Number(row.n)]))
      for (const id of missing)
        kept.set(id, version, { total: totals.get(id) ?? 0, unread: unreads.get(id) ?? 0 })
    }
    return new Map(ids.map((id) => [id, kept.peek(id, version) ?? { total: 0, unread: 0 }]))
  }
}
