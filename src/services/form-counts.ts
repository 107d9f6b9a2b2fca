import type { Kysely } from 'kysely'
import { readFormStates } from '../db/content-version.js'
import type { Database } from '../db/tables.js'

/** How many submissions a form has, and how many of them are unread. */
export interface FormCounts {
  total: number
  unread: number
}

/**
 * The submission counts of forms, as the dashboard shows them beside each form: read from the
 * counts the database keeps per form (migration 010), which its triggers move in the transaction
 * of every write to submissions, so they are exact without counting a busy form's million rows.
 */
export function createFormCounts(db: Kysely<Database>) {
  return async (ids: readonly string[]): Promise<Map<string, FormCounts>> => {
    const states = await readFormStates(db, ids)
    return new Map(
      ids.map((id) => {
        const state = states.get(id)
        return [id, { total: state?.total ?? 0, unread: state?.unread ?? 0 }]
      }),
    )
  }
}
