import type { Executor } from '../executor.js'

/**
 * How many rows of `table` come before row `id` in the dashboard lists' default order (created_at,
 * then id): the list page to show the row on. 0 when there is no such row.
 */
export async function positionInCreatedOrder(
  db: Executor,
  table: 'forms' | 'pages',
  id: string,
): Promise<number> {
  const row = await db.selectFrom(table).select('created_at').where('id', '=', id).executeTakeFirst()
  if (!row) return 0
  const { before } = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('before'))
    // A row-value comparison: one range of the (created_at, id) index that orders the list.
    .where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(row.created_at, id)))
    .executeTakeFirstOrThrow()
  return Number(before)
}
