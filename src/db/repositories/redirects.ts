import { setImmediate as nextTurn } from 'node:timers/promises'
import { type Selectable, sql } from 'kysely'
import type { RedirectType } from '../../schemas.js'
import type { Executor } from '../executor.js'
import type { RedirectsTable } from '../tables.js'

/**
 * The redirects table's SQL, for the redirect service (`services/redirects/`): the service keeps
 * the rules, the locking and the transactions, and hands its transaction to these functions.
 */

export type RedirectRow = Selectable<RedirectsTable>

/** The columns a batch of {@link redirectBatches} holds. */
export type RedirectBatchRow = Pick<RedirectRow, 'id' | 'from_path' | 'to_path' | 'type' | 'is_active'>

/** Rows per read when every redirect must be seen (see docs/performance.md). */
const READ_BATCH = 1000
/** Redirects followed per statement when walking from a path. */
export const WALK_STEPS = 2000

/** A redirect's active flag as stored. */
export const activeFlag = (active: boolean) => (active ? (1 as const) : (0 as const))

/**
 * Every redirect, in the redirects' order (oldest first), in batches of {@link READ_BATCH} read by
 * key (no deep OFFSET), with a turn of the event loop between batches: reading a million redirects
 * must not stop the server answering.
 */
export async function* redirectBatches(
  db: Executor,
  options: { activeOnly?: boolean } = {},
): AsyncGenerator<RedirectBatchRow[]> {
  let after: { created_at: string; id: string } | undefined
  for (;;) {
    let query = db
      .selectFrom('redirects')
      .select(['id', 'created_at', 'from_path', 'to_path', 'type', 'is_active'])
      .orderBy('created_at')
      .orderBy('id')
      .limit(READ_BATCH)
    if (options.activeOnly) query = query.where('is_active', '=', 1)
    const key = after
    if (key)
      query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(key.created_at, key.id)))
    const rows = await query.execute()
    if (rows.length > 0) yield rows
    if (rows.length < READ_BATCH) return
    after = rows[rows.length - 1]
    await nextTurn()
  }
}

/** The redirect `id`, if there is one. */
export function findRedirectById(db: Executor, id: string): Promise<RedirectRow | undefined> {
  return db.selectFrom('redirects').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The id of the redirect from `fromPath`, if there is one. */
export function findRedirectIdFrom(db: Executor, fromPath: string): Promise<{ id: string } | undefined> {
  return db.selectFrom('redirects').select('id').where('from_path', '=', fromPath).executeTakeFirst()
}

/**
 * Up to {@link WALK_STEPS} redirects followed from `from`, nearest first, by indexed lookups on
 * `from_path`: the redirect `excludeId` is left out, and the walk stops after a redirect to `stopAt`.
 */
export function walkRedirectsFrom(trx: Executor, from: string, excludeId: string, stopAt: string) {
  return trx
    .withRecursive('walk(from_path, to_path, is_active, depth)', (db) =>
      db
        .selectFrom('redirects')
        .select(['from_path', 'to_path', 'is_active', sql<number>`0`.as('depth')])
        .where('from_path', '=', from)
        .where('id', '!=', excludeId)
        .unionAll((next) =>
          next
            .selectFrom('redirects as r')
            .innerJoin('walk as w', 'r.from_path', 'w.to_path')
            .select(['r.from_path', 'r.to_path', 'r.is_active', sql<number>`w.depth + 1`.as('depth')])
            .where('w.depth', '<', WALK_STEPS - 1)
            .where('w.to_path', '!=', stopAt)
            .where('r.id', '!=', excludeId),
        ),
    )
    .selectFrom('walk')
    .selectAll()
    .orderBy('depth')
    .execute()
}

/** The paths of up to `limit` active redirects to `path`, in path order. */
export function activeRedirectsTo(trx: Executor, path: string, limit: number) {
  return trx
    .selectFrom('redirects')
    .select('from_path')
    .where('to_path', '=', path)
    .where('is_active', '=', 1)
    .orderBy('from_path')
    .limit(limit)
    .execute()
}

export async function insertRedirect(trx: Executor, row: RedirectRow): Promise<void> {
  await trx.insertInto('redirects').values(row).execute()
}

export async function updateRedirectRow(
  trx: Executor,
  id: string,
  fields: Partial<Omit<RedirectRow, 'id' | 'created_at'>>,
): Promise<void> {
  await trx.updateTable('redirects').set(fields).where('id', '=', id).execute()
}

export async function deleteRedirectRow(trx: Executor, id: string): Promise<void> {
  await trx.deleteFrom('redirects').where('id', '=', id).execute()
}

/** Points the redirects from `fromPaths` at `toPath`, with `type`: one statement. */
export async function redirectAllTo(
  trx: Executor,
  fromPaths: string[],
  toPath: string,
  type: RedirectType,
  timestamp: string,
): Promise<void> {
  await trx
    .updateTable('redirects')
    .set({ to_path: toPath, type, updated_at: timestamp })
    .where('from_path', 'in', fromPaths)
    .execute()
}

/**
 * Points each redirect at its own destination, with `type`: one statement with a CASE, which
 * costs each row one comparison per branch, so callers keep batches small.
 */
export async function redirectEachTo(
  trx: Executor,
  batch: readonly { fromPath: string; toPath: string }[],
  type: RedirectType,
  timestamp: string,
): Promise<void> {
  const destinations = sql.join(
    batch.map((update) => sql`when ${sql.ref('from_path')} = ${update.fromPath} then ${update.toPath}`),
    sql` `,
  )
  await trx
    .updateTable('redirects')
    .set({
      to_path: sql<string>`case ${destinations} else ${sql.ref('to_path')} end`,
      type,
      updated_at: timestamp,
    })
    .where(
      'from_path',
      'in',
      batch.map((update) => update.fromPath),
    )
    .execute()
}

/** The stored redirects from `fromPaths`: what each does now. */
export function redirectsFrom(trx: Executor, fromPaths: string[]) {
  return trx
    .selectFrom('redirects')
    .select(['from_path', 'to_path', 'type', 'is_active'])
    .where('from_path', 'in', fromPaths)
    .execute()
}

/**
 * Inserts new rows and updates changed ones in the same statement, keyed on `from_path`; a changed
 * row keeps its id and creation time.
 */
export async function upsertRedirects(trx: Executor, rows: RedirectRow[]): Promise<void> {
  await trx
    .insertInto('redirects')
    .values(rows)
    .onConflict((conflict) =>
      conflict.column('from_path').doUpdateSet((eb) => ({
        to_path: eb.ref('excluded.to_path'),
        type: eb.ref('excluded.type'),
        is_active: eb.ref('excluded.is_active'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute()
}

/** An active redirect as the matcher is built from it, with its order key. */
export type ActiveRedirectRow = Pick<RedirectRow, 'id' | 'from_path' | 'to_path' | 'type' | 'created_at'>

/**
 * Up to `limit` active redirects after the order key `after` (from the start without it), oldest
 * first, read along the active-order index.
 */
export function activeRedirectsAfter(
  db: Executor,
  after: { created_at: string; id: string } | undefined,
  limit: number,
): Promise<ActiveRedirectRow[]> {
  let query = db
    .selectFrom('redirects')
    .select(['id', 'from_path', 'to_path', 'type', 'created_at'])
    .where('is_active', '=', 1)
  if (after) {
    const { created_at, id } = after
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', created_at),
        eb.and([eb('created_at', '=', created_at), eb('id', '>', id)]),
      ]),
    )
  }
  return query.orderBy('created_at').orderBy('id').limit(limit).execute()
}
