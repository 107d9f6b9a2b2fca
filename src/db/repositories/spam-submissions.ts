import type { Selectable } from 'kysely'
import type { Executor } from '../executor.js'
import type { SpamSubmissionsTable } from '../tables.js'

/**
 * The spam_submissions table's SQL: what the honeypot caught, kept apart from submissions (see
 * migration 012). For the intake (`services/intake.ts`), which writes it, counts it and deletes it
 * when expired, and for the spam service (`services/spam.ts`), which lists it, deletes it by hand
 * and releases it into the inbox. The services keep the rules, the audit entries and the
 * transactions, and hand their executor here.
 */

/** A spam row as read. */
export type SpamRow = Selectable<SpamSubmissionsTable>

/** Writes caught posts. */
export async function insertSpamSubmissions(db: Executor, rows: SpamRow[]): Promise<void> {
  await db.insertInto('spam_submissions').values(rows).execute()
}

/** How many caught posts form `formId` has in its spam. */
export async function countSpamOfForm(db: Executor, formId: string): Promise<number> {
  const row = await db
    .selectFrom('spam_submissions')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('form_id', '=', formId)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

/**
 * One page of form `formId`'s spam, newest first (then by id, so the order is total), `limit`
 * rows from `offset`, with how much spam the form has in all (counted first).
 */
export async function spamPageOfForm(
  db: Executor,
  formId: string,
  limit: number,
  offset: number,
): Promise<{ total: number; rows: SpamRow[] }> {
  const total = await countSpamOfForm(db, formId)
  const rows = await db
    .selectFrom('spam_submissions')
    .selectAll()
    .where('form_id', '=', formId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()
  return { total, rows }
}

/** The spam row `id`, if it is still kept. */
export function findSpamById(db: Executor, id: string): Promise<SpamRow | undefined> {
  return db.selectFrom('spam_submissions').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Deletes the spam row `id`. */
export async function deleteSpamById(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('spam_submissions').where('id', '=', id).execute()
}

/** Deletes the spam created before `before`; returns how many rows it deleted. */
export async function deleteSpamCreatedBefore(db: Executor, before: string): Promise<number> {
  const spam = await db.deleteFrom('spam_submissions').where('created_at', '<', before).executeTakeFirst()
  return Number(spam.numDeletedRows)
}
