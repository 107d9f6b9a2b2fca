import type { Insertable, Selectable, Updateable } from 'kysely'
import type { FormsTable } from '../tables.js'
import { positionInCreatedOrder } from './positions.js'
import type { Executor } from './redirects.js'

/**
 * The forms table's SQL for the dashboard's changes to forms: the services keep the rules, the
 * audit entries and the transactions, and hand their executor here. The API's pages of forms are
 * `content.ts`'s; the importer writes forms in bulk itself.
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
