import { type Compilable, type Insertable, type OnConflictBuilder, sql } from 'kysely'
import { BATCH_SIZE, chunks } from '../batches.js'
import type { Executor } from '../executor.js'
import type { Database } from '../tables.js'

/**
 * The SQL an import (`services/import/`) runs across the content tables: what its checks read of
 * the stored forms, pages and redirects, and its writes of their rows and of submissions. The
 * sorted load of many submissions is `db/sorted-submission-load.ts`.
 */

/** The tables an import writes. */
export type ContentTable = 'forms' | 'submissions' | 'pages' | 'redirects'
/** The `SET` of an upsert on `T`: column → new value. */
type ConflictUpdate<T extends ContentTable> = Parameters<OnConflictBuilder<Database, T>['doUpdateSet']>[0]

/** The ids of every stored form: the forms a submission of the file may name. */
export async function allFormIds(db: Executor): Promise<Set<string>> {
  const formRows = await db.selectFrom('forms').select('id').execute()
  return new Set(formRows.map((row) => row.id))
}

/** The stored pages whose path is among `paths` (one statement: callers batch the paths). */
export function pagesWithPaths(db: Executor, paths: string[]): Promise<{ id: string; path: string }[]> {
  return db.selectFrom('pages').select(['id', 'path']).where('path', 'in', paths).execute()
}

/** The ids of the stored redirects from `fromPaths`, by path; asked {@link BATCH_SIZE} paths at a time. */
export async function redirectIdsFrom(
  db: Executor,
  fromPaths: readonly string[],
): Promise<Map<string, string>> {
  const storedIds = new Map<string, string>()
  for (const batch of chunks(fromPaths, BATCH_SIZE)) {
    const rows = await db
      .selectFrom('redirects')
      .select(['id', 'from_path'])
      .where('from_path', 'in', batch)
      .execute()
    for (const row of rows) storedIds.set(row.from_path, row.id)
  }
  return storedIds
}

/**
 * Moves the paths of the stored pages or redirects `ids` out of the way, to a placeholder no real
 * path can be (`//replaced/<id>`), so that paths can move between them (a swap then breaks no
 * unique index). The rows stay, with their creation times, until their records overwrite them.
 */
export async function releaseStoredPaths(
  db: Executor,
  table: 'pages' | 'redirects',
  ids: string[],
): Promise<void> {
  const placeholder = sql<string>`${'//replaced/'} || ${sql.ref('id')}`
  if (table === 'pages') {
    await db.updateTable('pages').set({ path: placeholder }).where('id', 'in', ids).execute()
  } else {
    await db.updateTable('redirects').set({ from_path: placeholder }).where('id', 'in', ids).execute()
  }
}

/** Whether submissions holds any row. */
export async function anySubmissionStored(db: Executor): Promise<boolean> {
  return (await db.selectFrom('submissions').select('id').limit(1).execute()).length > 0
}

/** Creation times of the rows of `table` among `ids` that already exist; asked {@link BATCH_SIZE} at a time. */
export async function createdAtOfExisting(
  db: Executor,
  table: ContentTable,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  for (const chunk of chunks(ids, BATCH_SIZE)) {
    const rows = await db.selectFrom(table).select(['id', 'created_at']).where('id', 'in', chunk).execute()
    for (const row of rows) found.set(row.id, row.created_at)
  }
  return found
}

/**
 * The statement that inserts `rows` into `table`, or overwrites every column of the row with the
 * same id (run through `StatementTemplates`, which compiles it once per row count and columns).
 */
export function upsertQuery<T extends ContentTable>(
  db: Executor,
  table: T,
  rows: Insertable<Database[T]>[],
): Compilable {
  const columns = Object.keys(rows[0]).filter((column) => column !== 'id')
  const update = Object.fromEntries(
    columns.map((column) => [
      column,
      // A form record without `intake` must not switch off (or on) a form's public intake.
      table === 'forms' && column === 'intake'
        ? sql`coalesce(excluded.intake, forms.intake)`
        : sql.ref(`excluded.${column}`),
    ]),
  )
  return db
    .insertInto(table)
    .values(rows)
    .onConflict((conflict) => conflict.column('id').doUpdateSet(update as ConflictUpdate<T>))
}
