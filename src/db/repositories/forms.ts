import type { Insertable, Selectable, Updateable } from 'kysely'
import type { Executor } from '../executor.js'
import type { FormsTable } from '../tables.js'
import { positionInCreatedOrder } from './positions.js'
import { LIKE_NOTIFY_EMAILS } from './webhook-endpoints.js'

/**
 * The forms table's SQL for the services: the dashboard's changes to forms, and the reads of forms
 * other services make (a key's forms, an endpoint's form, an email's form). The services keep the
 * rules, the audit entries and the transactions, and hand their executor here. The API's pages of
 * forms are `content.ts`'s; the importer writes forms in bulk itself.
 */

export type FormRow = Selectable<FormsTable>

/** The form `id`, if there is one. */
export function findFormById(db: Executor, id: string): Promise<FormRow | undefined> {
  return db.selectFrom('forms').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Whether there is a form `id`. */
export async function formExists(db: Executor, id: string): Promise<boolean> {
  return (await db.selectFrom('forms').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}

/** Where form `id` sits in the list of forms by creation (0 for the first, or when there is none). */
export const formPosition = (db: Executor, id: string): Promise<number> =>
  positionInCreatedOrder(db, 'forms', id)

/** Writes a new form. */
export async function insertForm(db: Executor, row: Insertable<FormsTable>): Promise<void> {
  await db.insertInto('forms').values(row).execute()
}

/** Sets the columns `change` gives on form `id`; returns whether there was such a form. */
export async function updateFormRow(
  db: Executor,
  id: string,
  change: Updateable<FormsTable>,
): Promise<boolean> {
  const result = await db.updateTable('forms').set(change).where('id', '=', id).executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Deletes form `id`; its submissions go with it by the foreign key's cascade. */
export async function deleteFormRow(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('forms').where('id', '=', id).execute()
}

/** Which of `ids` are forms that exist. */
export async function existingFormIds(db: Executor, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db.selectFrom('forms').select('id').where('id', 'in', ids).execute()
  return new Set(rows.map((row) => row.id))
}

/** The titles of those of `ids` that are forms that exist, by id. */
export async function formTitles(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('forms').select(['id', 'title']).where('id', 'in', ids).execute()
  return new Map(rows.map((form) => [form.id, form.title]))
}

/**
 * The first `limit` forms by title, for the dashboard's key form picker, and whether there are more
 * (one row beyond the limit says so without counting the table).
 */
export async function formChoices(
  db: Executor,
  limit: number,
): Promise<{ forms: { id: string; title: string }[]; more: boolean }> {
  const rows = await db
    .selectFrom('forms')
    .select(['id', 'title'])
    .orderBy('title')
    .orderBy('id')
    .limit(limit + 1)
    .execute()
  return { forms: rows.slice(0, limit), more: rows.length > limit }
}

/** The title and intake settings of form `id`, for the email of one of its submissions. */
export function findFormForEmail(db: Executor, id: string) {
  return db.selectFrom('forms').select(['id', 'title', 'intake']).where('id', '=', id).executeTakeFirst()
}

/** The stored intake settings (JSON text, or null) of form `formId`, if there is such a form. */
export function findFormIntake(db: Executor, formId: string): Promise<{ intake: string | null } | undefined> {
  return db.selectFrom('forms').select('intake').where('id', '=', formId).executeTakeFirst()
}

/** Stores `intake` (JSON text) as form `formId`'s intake settings, changed at `updatedAt`. */
export async function setFormIntake(
  db: Executor,
  formId: string,
  intake: string,
  updatedAt: string,
): Promise<void> {
  await db.updateTable('forms').set({ intake, updated_at: updatedAt }).where('id', '=', formId).execute()
}

/** The forms with stored intake settings (a form without has the defaults, which keep every submission). */
export function formsWithIntake(db: Executor): Promise<{ id: string; intake: string | null }[]> {
  return db.selectFrom('forms').select(['id', 'intake']).where('intake', 'is not', null).execute()
}

/**
 * The forms with addresses to email of each new submission (among `formIds`, when given): the forms
 * whose `submission.created` events get an email delivery.
 */
export function listEmailedForms(db: Executor, formIds?: readonly string[]): Promise<{ form_id: string }[]> {
  return db
    .selectFrom('forms')
    .select('id as form_id')
    .where('intake', 'like', LIKE_NOTIFY_EMAILS)
    .$if(formIds !== undefined, (q) => q.where('id', 'in', formIds as readonly string[]))
    .execute()
}
