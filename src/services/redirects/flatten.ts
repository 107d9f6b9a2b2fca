import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Kysely, Transaction } from 'kysely'
import type { Executor } from '../../db/executor.js'
import { redirectAllTo, redirectBatches, redirectEachTo } from '../../db/repositories/redirects.js'
import type { Database } from '../../db/tables.js'
import { grown } from '../../string-table.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { ROWS_PER_TURN, WRITE_BATCH } from './pacing.js'
import { flatteningYielding, type RedirectFlattening, RedirectGraph, resolveYielding } from './rules.js'
import { bulkCommit, optimistic } from './transactions.js'

/** Rows per CASE statement of a flattening: each row is compared with every branch. */
const CASE_BATCH = 100
/** Changes a flattening's audit entry describes one by one; a larger one lists the first of them. */
const AUDITED_FLATTENINGS = 100

/** What flattening the chains did. */
export interface RedirectFlatteningResult {
  /** How many redirects now point straight at the end of their chain. */
  changed: number
  /** How many of those were permanent and became temporary, as a link of their chain is. */
  madeTemporary: number
}

/**
 * A flattening's audit entry: how many redirects changed, and each (up to
 * {@link AUDITED_FLATTENINGS}) with its old and new destination and type,
 * `/a: /b permanent → /c temporary`.
 */
export function flatteningAuditDetail(updates: readonly RedirectFlattening[], madeTemporary: number) {
  const listed = updates
    .slice(0, AUDITED_FLATTENINGS)
    .map((u) => `${u.fromPath}: ${u.before.toPath} ${u.before.type} → ${u.toPath} ${u.type}`)
  return {
    changed: updates.length,
    madeTemporary,
    redirects: listed,
    ...(updates.length > listed.length ? { notListed: updates.length - listed.length } : {}),
  }
}

/** Where every chained active redirect should point: the end of its chain, temporary if any link is. */
async function planFlattening(reader: Executor): Promise<RedirectFlattening[]> {
  const graph = new RedirectGraph()
  // The temporary redirects, by path number: one list of numbers, however many there are.
  let temporary = new Int32Array(1 << 10)
  let temporaryCount = 0
  for await (const rows of redirectBatches(reader, { activeOnly: true }))
    for (const row of rows) {
      const from = graph.paths.intern(row.from_path)
      if (!graph.addNodes(from, graph.paths.intern(row.to_path)) || row.type !== 'temporary') continue
      if (temporaryCount === temporary.length) temporary = grown(temporary, temporaryCount + 1)
      temporary[temporaryCount++] = from
    }
  const isTemporary = new Uint8Array(graph.paths.size)
  for (let i = 0; i < temporaryCount; i++) isTemporary[temporary[i] as number] = 1
  return flatteningYielding(await resolveYielding(graph), (node) => isTemporary[node] === 1)
}

/** Writes a flattening and its audit entry. */
async function writeFlattening(
  trx: Transaction<Database>,
  updates: RedirectFlattening[],
  actor: Actor,
): Promise<RedirectFlatteningResult> {
  const timestamp = now()
  // Redirects that end at the same place with the same type (every link of one long chain) share
  // one statement per batch; the rest get their own destination through a CASE, in small batches.
  for (const type of ['permanent', 'temporary'] as const) {
    const byDestination = new Map<string, string[]>()
    for (const [index, update] of updates.entries()) {
      if (index % ROWS_PER_TURN === ROWS_PER_TURN - 1) await nextTurn()
      if (update.type !== type) continue
      const sources = byDestination.get(update.toPath)
      if (sources) sources.push(update.fromPath)
      else byDestination.set(update.toPath, [update.fromPath])
    }
    const singles: { fromPath: string; toPath: string }[] = []
    for (const [toPath, sources] of byDestination) {
      if (sources.length === 1) {
        singles.push({ fromPath: sources[0] as string, toPath })
        continue
      }
      for (let i = 0; i < sources.length; i += WRITE_BATCH) {
        await redirectAllTo(trx, sources.slice(i, i + WRITE_BATCH), toPath, type, timestamp)
        await nextTurn()
      }
    }
    for (let i = 0; i < singles.length; i += CASE_BATCH) {
      await redirectEachTo(trx, singles.slice(i, i + CASE_BATCH), type, timestamp)
      await nextTurn()
    }
  }
  const madeTemporary = updates.filter((update) => update.type !== update.before.type).length
  if (updates.length > 0)
    await recordAudit(trx, {
      actor,
      action: 'redirects.flattened',
      target: 'redirects',
      detail: flatteningAuditDetail(updates, madeTemporary),
    })
  return { changed: updates.length, madeTemporary }
}

/**
 * Points every chained active redirect straight at where its chain ends, so that clients need
 * one hop, with the answer they got before: a flattened redirect is permanent only when every
 * link it replaces was (a chain through a temporary redirect answered 302, and still does).
 * Returns how many redirects changed, and how many of those became temporary.
 */
export function flattenChains(db: Kysely<Database>, actor: Actor): Promise<RedirectFlatteningResult> {
  return bulkCommit(
    db,
    () => optimistic(db, planFlattening, (trx, updates) => writeFlattening(trx, updates, actor)),
    (result) => result.changed,
  )
}
