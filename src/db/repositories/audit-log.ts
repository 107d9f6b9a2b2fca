import type { Kysely, Selectable } from 'kysely'
import type { AuditLogTable, Database } from '../tables.js'

/** The audit_log table's SQL: one insert per change, and the newest-first reads of the log. */

/** An entry as the log stores it: `detail` is JSON text or null. */
export interface AuditRow {
  at: string
  actor: string
  action: string
  target: string
  detail: string | null
}

/** Which entries a read wants: all, or those of one action and/or one actor (exact values). */
export interface AuditRowFilter {
  action?: string
  actor?: string
}

/** Appends one entry through `db`, which is the transaction of the change it records. */
export async function insertAuditEntry(db: Kysely<Database>, row: AuditRow): Promise<void> {
  await db.insertInto('audit_log').values(row).execute()
}

function filtered(db: Kysely<Database>, filter: AuditRowFilter) {
  let query = db.selectFrom('audit_log')
  if (filter.action !== undefined) query = query.where('action', '=', filter.action)
  if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor)
  return query
}

/** How many entries match `filter`. */
export async function countAuditEntries(db: Kysely<Database>, filter: AuditRowFilter): Promise<number> {
  const { total } = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .executeTakeFirstOrThrow()
  return Number(total)
}

/** `limit` entries matching `filter` from `offset`, newest first (the id orders them). */
export function auditEntries(
  db: Kysely<Database>,
  filter: AuditRowFilter,
  limit: number,
  offset?: number,
): Promise<Selectable<AuditLogTable>[]> {
  const query = filtered(db, filter).selectAll().orderBy('id', 'desc').limit(limit)
  return (offset === undefined ? query : query.offset(offset)).execute()
}
