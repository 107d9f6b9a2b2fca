import type { Insertable, Selectable, Updateable } from 'kysely'
import type { Executor } from '../executor.js'
import type { PagesTable } from '../tables.js'
import { positionInCreatedOrder } from './positions.js'

/**
 * The pages table's SQL for the dashboard's changes to pages: the services keep the rules, the
 * audit entries and the transactions, and hand their executor here. The API's pages of pages are
 * `content.ts`'s; the importer writes pages in bulk itself.
 */

export type PageRow = Selectable<PagesTable>

/** The page `id`, if there is one. */
export function findPageById(db: Executor, id: string): Promise<PageRow | undefined> {
  return db.selectFrom('pages').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The title of the page whose path is `path`, if there is one. */
export function findPageTitleByPath(db: Executor, path: string): Promise<{ title: string } | undefined> {
  return db.selectFrom('pages').select('title').where('path', '=', path).executeTakeFirst()
}

/** Where page `id` sits in the list of pages by creation (0 for the first, or when there is none). */
export const pagePosition = (db: Executor, id: string): Promise<number> =>
  positionInCreatedOrder(db, 'pages', id)

/** Writes a new page; a path another page has fails on the unique index (`UniqueViolationError`). */
export async function insertPage(db: Executor, row: Insertable<PagesTable>): Promise<void> {
  await db.insertInto('pages').values(row).execute()
}

/** Sets the columns `change` gives on page `id`. */
export async function updatePageRow(db: Executor, id: string, change: Updateable<PagesTable>): Promise<void> {
  await db.updateTable('pages').set(change).where('id', '=', id).execute()
}

/** Deletes page `id`. */
export async function deletePageRow(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('pages').where('id', '=', id).execute()
}
