import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { CsvError, parse } from 'csv-parse'
import { stringify } from 'csv-stringify/sync'
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely'
import {
  ANALYZE_AFTER_ROWS,
  refreshStatistics,
  withBulkContentWrites,
  withCheckpointInWorker,
} from '../../db/bulk-writes.js'
import { UniqueViolationError } from '../../db/errors.js'
import { takeLock } from '../../db/locks.js'
import { presentRedirect } from '../../db/repositories/content.js'
import type { Database, RedirectsTable } from '../../db/tables.js'
import { firstAndRemainder, NotFoundError, ValidationError } from '../../errors.js'
import { newId } from '../../ids.js'
import type { Redirect, RedirectType } from '../../schemas.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { FieldValidationError } from '../content-admin.js'
import { grown } from '../import/string-table.js'
import {
  describeLoop,
  describeRedirectRoute,
  flatteningYielding,
  normaliseRedirectPath,
  type RedirectChainSummary,
  type RedirectFlattening,
  RedirectGraph,
  ROUTE_HEAD,
  redirectPathForEntry,
  resolveYielding,
} from './rules.js'

/** A redirect as a person enters it: in a form, or as a row of a CSV file. */
export interface RedirectInput {
  fromPath: string
  toPath: string
  /** `permanent` (301, the default) or `temporary` (302). */
  type?: string
  isActive?: boolean
}

/**
 * What a change left behind: the redirect, and the chains it now takes part in (worth flattening),
 * described (`/a → /b → /c`). At most {@link LISTED_CHANGE_CHAINS} are listed; `moreChains` says
 * whether there are others.
 */
export interface RedirectChange {
  redirect: Redirect
  chains: string[]
  moreChains: boolean
}

/**
 * The chains among the active redirects: how many redirects form them, and the first few in the
 * redirects' order. Analysed once per content version; `state` is `current` when it describes the
 * redirects as they are, `stale` when it describes an earlier version while the current one is
 * still being analysed (a very large set), and `pending` when no analysis has finished yet.
 */
export interface RedirectChainsReport {
  count: number
  listed: RedirectChainSummary[]
  state: 'current' | 'stale' | 'pending'
}

/** What flattening the chains did. */
export interface RedirectFlatteningResult {
  /** How many redirects now point straight at the end of their chain. */
  changed: number
  /** How many of those were permanent and became temporary, as a link of their chain is. */
  madeTemporary: number
}

export interface RedirectImportResult {
  created: number
  updated: number
  unchanged: number
  /** How many active redirects form chains after the import. */
  chainCount: number
}

/** The columns of the CSV format, in the order `exportCsv` writes them. */
export const CSV_COLUMNS = ['fromPath', 'toPath', 'type', 'isActive'] as const
/** More problems than this in one import are summarised rather than listed. */
const MAX_LISTED_PROBLEMS = 50
/** Rows per CASE statement of a flattening: each row is compared with every branch. */
const CASE_BATCH = 100
/**
 * Rows per multi-row statement of an import, a flattening or an export: each written row updates
 * several indexes, synchronously on SQLite (250 rows took up to 57 ms on a busy machine).
 */
const WRITE_BATCH = 100
/**
 * Rows per read when every redirect must be seen: SQLite reads synchronously, and a read of 1,000
 * rows plus adding them to a graph stays within a few milliseconds even on a busy machine (5,000
 * took 30–110 ms there, the event loop stopped meanwhile).
 */
const READ_BATCH = 1000
/** CSV rows checked between two turns of the event loop. */
const ROWS_PER_TURN = 2000
/**
 * Characters of CSV text handed to the parser at a time: it parses a whole slice synchronously
 * (64 KiB took 40 ms on a busy machine).
 */
const CSV_SLICE = 16 * 1024
/** Redirects followed per statement when walking from a path. */
const WALK_STEPS = 2000
/** Chains named in the message after one change; the dashboard lists this many on its page. */
const LISTED_CHANGE_CHAINS = 5
export const LISTED_CHAINS = 10
/** Redirects leading to a changed one that are looked at to name the chains it joins. */
const MAX_ANCESTORS = 50
/** How long a dashboard page waits for a fresh chain analysis before showing the previous one. */
const FRESH_ANALYSIS_WAIT_MS = 400
/** A (whole) write is tried again this often when other changes keep landing while it is checked. */
const OPTIMISTIC_TRIES = 3

/** Changes a flattening's audit entry describes one by one; a larger one lists the first of them. */
const AUDITED_FLATTENINGS = 100

/**
 * A flattening's audit entry: how many redirects changed, and each (up to
 * {@link AUDITED_FLATTENINGS}) with its old and new destination and type,
 * `/a: /b permanent → /c temporary`.
 */
function flatteningAuditDetail(updates: readonly RedirectFlattening[], madeTemporary: number) {
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

/** A redirect as entered, checked and normalised. */
interface RedirectValue {
  fromPath: string
  toPath: string
  type: RedirectType
  isActive: boolean
}

type Row = Selectable<RedirectsTable>
type Executor = Kysely<Database> | Transaction<Database>

/** A chain for a message or a list: `/a → /b → /c`, shortened in the middle when long. */
export const describeChain = (chain: RedirectChainSummary): string =>
  describeRedirectRoute(chain.head, chain.hops + 1, chain.finalPath)

/** The fields of a redirect a person enters, each of which a problem can be said beside. */
export type RedirectField = 'fromPath' | 'toPath' | 'type'

/**
 * Checks one redirect as a person entered it; returns it normalised (paths trimmed and
 * percent-decoded, defaults applied) with every problem found, each a sentence naming the field.
 */
function checkRedirectInput(input: RedirectInput): {
  value: RedirectValue
  problems: string[]
  fields: Partial<Record<RedirectField, string>>
} {
  const fields: Partial<Record<RedirectField, string>> = {}
  const path = (field: RedirectField, label: string, given: string) => {
    const trimmed = given.trim()
    if (trimmed === '') {
      fields[field] = `${label} is required`
      return trimmed
    }
    const normalised = normaliseRedirectPath(trimmed)
    if (normalised.problem !== null) fields[field] = `${label} ${normalised.problem}`
    return normalised.path ?? trimmed
  }
  const fromPath = path('fromPath', 'From path', input.fromPath)
  const toPath = path('toPath', 'To path', input.toPath)
  const type = (input.type ?? '').trim() || 'permanent'
  if (type !== 'permanent' && type !== 'temporary')
    fields.type = `Type must be 'permanent' or 'temporary', not '${type}'`
  return {
    value: { fromPath, toPath, type: type as RedirectType, isActive: input.isActive ?? true },
    problems: Object.values(fields),
    fields,
  }
}

const loopSentence = (loop: Route) =>
  `This would make a redirect loop (${describeRedirectRoute(loop.head, loop.length, loop.last)}): clients would be sent round in circles. Point it at a path that does not redirect back.`

const flag = (active: boolean) => (active ? (1 as const) : (0 as const))

/** The redirects' version: it moves with every write to redirects (see migration 010). */
async function contentVersion(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('content_versions')
    .select('version')
    .where('kind', '=', 'redirects')
    .executeTakeFirst()
  return Number(row?.version ?? 0)
}

/**
 * Every redirect, in the redirects' order (oldest first), in batches of {@link READ_BATCH} read by
 * key (no deep OFFSET), with a turn of the event loop between batches: reading a million redirects
 * must not stop the server answering.
 */
export async function* redirectBatches(
  db: Executor,
  options: { activeOnly?: boolean } = {},
): AsyncGenerator<Pick<Row, 'id' | 'from_path' | 'to_path' | 'type' | 'is_active'>[]> {
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

/** A route followed from a redirect: its first paths, how many paths in all, and the last. */
interface Route {
  head: string[]
  length: number
  last: string
}

const startRoute = (first: string): Route => ({ head: [first], length: 1, last: first })
function extendRoute(route: Route, path: string): void {
  if (route.head.length < ROUTE_HEAD) route.head.push(path)
  route.length++
  route.last = path
}

/**
 * Walks from `value.toPath` along the redirects as they would be with `value` saved (the redirect
 * `excludeId` replaced by it), by indexed lookups on `from_path`, a few thousand per statement.
 * Returns the loop `value` would close, if any, and the route of active redirects it starts.
 */
async function walkFrom(
  trx: Executor,
  value: RedirectValue,
  excludeId: string,
): Promise<{ loop: Route | null; active: Route }> {
  const active = startRoute(value.fromPath)
  extendRoute(active, value.toPath)
  let stillActive = value.isActive
  // The loop this redirect would close, told from its own path: `from → to → … → from`.
  const route = startRoute(value.fromPath)
  extendRoute(route, value.toPath)
  if (value.toPath === value.fromPath) return { loop: route, active }
  const seen = new Set<string>([value.fromPath])
  let start = value.toPath
  for (;;) {
    const from = start
    const rows = await trx
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
              .where('w.to_path', '!=', value.fromPath)
              .where('r.id', '!=', excludeId),
          ),
      )
      .selectFrom('walk')
      .selectAll()
      .orderBy('depth')
      .execute()
    for (const row of rows) {
      // A loop that does not pass through this redirect was there before; it is not this change's.
      if (seen.has(row.from_path)) return { loop: null, active }
      seen.add(row.from_path)
      stillActive &&= Number(row.is_active) === 1
      if (stillActive) extendRoute(active, row.to_path)
      extendRoute(route, row.to_path)
      if (row.to_path === value.fromPath) return { loop: route, active }
    }
    if (rows.length < WALK_STEPS) return { loop: null, active }
    start = (rows[rows.length - 1] as { to_path: string }).to_path
    await nextTurn()
  }
}

/**
 * The chains an active redirect takes part in, described: the one it starts (when its destination
 * is redirected) and one for each active redirect leading to it, found by lookups on `to_path`.
 */
async function chainsThrough(trx: Executor, forward: Route): Promise<{ chains: string[]; more: boolean }> {
  const chains: string[] = []
  if (forward.length > 2) chains.push(describeRedirectRoute(forward.head, forward.length, forward.last))
  const fromPath = forward.head[0] as string
  // Breadth first: the nearest redirects leading here first; each with the paths back to this one.
  let frontier: { path: string; before: string[]; depth: number }[] = [
    { path: fromPath, before: [], depth: 0 },
  ]
  const seen = new Set<string>([fromPath])
  let more = false
  while (frontier.length > 0) {
    const next: typeof frontier = []
    for (const { path, before, depth } of frontier) {
      const leading = await trx
        .selectFrom('redirects')
        .select('from_path')
        .where('to_path', '=', path)
        .where('is_active', '=', 1)
        .orderBy('from_path')
        .limit(MAX_ANCESTORS + 1)
        .execute()
      for (const { from_path: ancestor } of leading) {
        if (seen.has(ancestor)) continue
        if (seen.size > MAX_ANCESTORS || chains.length >= LISTED_CHANGE_CHAINS) {
          more = true
          return { chains, more }
        }
        seen.add(ancestor)
        const paths = [ancestor, ...before].slice(0, ROUTE_HEAD)
        const head = [...paths, ...forward.head].slice(0, ROUTE_HEAD)
        chains.push(describeRedirectRoute(head, depth + 1 + forward.length, forward.last))
        next.push({ path: ancestor, before: paths, depth: depth + 1 })
      }
    }
    frontier = next
  }
  return { chains, more }
}

/**
 * Creating, changing and removing redirects under the redirect rules: paths that cannot be an
 * open redirect (stored percent-decoded), unique `fromPath`, no loops (checked across all
 * redirects, active or not, so that activating one later cannot close a loop), and chains reported
 * so they can be flattened.
 *
 * Nothing here reads every redirect to change one: a change walks from its destination by indexed
 * lookups. What needs every redirect (the chain report, a CSV import, flattening) reads them in
 * keyed batches with turns of the event loop between, so a million redirects never stall the
 * server; the chain report is cached per content version.
 *
 * Writers take the `redirects` lock, so two changes made at once (on any instance) are checked
 * one after the other and cannot close a loop between them. Every write to redirects goes through
 * this file (see `content-admin.ts`), bulk imports aside.
 */
export function createRedirectService(db: Kysely<Database>) {
  /** Runs `work` holding the redirects lock. */
  const locked = async <T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> => {
    try {
      return await db.transaction().execute(async (trx) => {
        await takeLock(trx, 'redirects')
        return work(trx)
      })
    } catch (error) {
      // Only a writer that skips the lock (a bulk import) can take a path from under us.
      if (error instanceof UniqueViolationError)
        throw new ValidationError('Another change took one of these paths meanwhile; please try again')
      throw error
    }
  }

  /** A write of many redirects moves the content version once, not once per row (see `bulk-writes.ts`). */
  const bulk = <T>(trx: Transaction<Database>, write: () => Promise<T>) =>
    withBulkContentWrites(trx, ['redirects'], write)

  /**
   * Runs `prepare` (which reads every redirect, outside any transaction so that readers are not
   * held up), then `commit` under the lock, if no content changed in between; otherwise again.
   * The last try prepares under the lock too, so a busy site still gets its change made.
   */
  const optimistic = async <P, T>(
    prepare: (db: Executor) => Promise<P>,
    commit: (trx: Transaction<Database>, prepared: P) => Promise<T>,
  ): Promise<T> => {
    for (let attempt = 1; attempt < OPTIMISTIC_TRIES; attempt++) {
      const version = await contentVersion(db)
      const prepared = await prepare(db)
      const outcome = await locked(async (trx) =>
        (await contentVersion(trx)) === version
          ? { done: true as const, value: await bulk(trx, () => commit(trx, prepared)) }
          : { done: false as const },
      )
      if (outcome.done) return outcome.value
    }
    return locked(async (trx) => {
      const prepared = await prepare(trx)
      return bulk(trx, () => commit(trx, prepared))
    })
  }

  /**
   * Runs a write of many redirects, whose commit leaves SQLite's checkpoint to a worker thread;
   * `changed` says how many rows it changed, so that PostgreSQL's statistics follow a large one.
   */
  const bulkCommit = async <T>(work: () => Promise<T>, changed: (result: T) => number): Promise<T> => {
    const result = await withCheckpointInWorker(db, work)
    if (changed(result) >= ANALYZE_AFTER_ROWS) await refreshStatistics(db, ['redirects'])
    return result
  }

  let analysed: { version: number; report: Omit<RedirectChainsReport, 'state'> } | undefined
  let analysing: { version: number; report: Promise<Omit<RedirectChainsReport, 'state'>> } | undefined

  /** The chains among the active redirects now; the whole set is read in batches (see `redirectBatches`). */
  const analyseChains = async (version: number) => {
    const graph = new RedirectGraph()
    for await (const rows of redirectBatches(db, { activeOnly: true }))
      for (const row of rows) graph.add(row.from_path, row.to_path)
    await resolveYielding(graph)
    const listed: RedirectChainSummary[] = []
    for (const chain of graph.chains()) {
      if (listed.length === LISTED_CHAINS) break
      listed.push(chain)
    }
    const report = { count: graph.chainCount(), listed }
    if (analysed === undefined || analysed.version < version) analysed = { version, report }
    return report
  }

  const write = (id: string | undefined, input: RedirectInput, actor: Actor): Promise<RedirectChange> => {
    const { value, problems, fields } = checkRedirectInput(input)
    if (problems.length > 0) throw new FieldValidationError(fields)
    return locked(async (trx) => {
      const current =
        id === undefined
          ? undefined
          : await trx.selectFrom('redirects').selectAll().where('id', '=', id).executeTakeFirst()
      if (id !== undefined && !current) throw new NotFoundError(`Redirect '${id}' not found`)
      const holder = await trx
        .selectFrom('redirects')
        .select('id')
        .where('from_path', '=', value.fromPath)
        .executeTakeFirst()
      if (holder && holder.id !== id)
        throw new FieldValidationError({
          fromPath: `A redirect from ${value.fromPath} already exists; edit that one instead`,
        })
      const { loop, active } = await walkFrom(trx, value, id ?? '')
      if (loop) {
        // The path that closes the loop is where it goes: the problem is said beside that field.
        throw new FieldValidationError({ toPath: loopSentence(loop) })
      }

      const timestamp = now()
      const fields = {
        from_path: value.fromPath,
        to_path: value.toPath,
        type: value.type,
        is_active: flag(value.isActive),
        updated_at: timestamp,
      }
      let row: Row
      if (current) {
        await trx.updateTable('redirects').set(fields).where('id', '=', current.id).execute()
        row = { ...current, ...fields }
      } else {
        row = { id: newId('redirect'), ...fields, created_at: timestamp }
        await trx.insertInto('redirects').values(row).execute()
      }
      await recordAudit(trx, {
        actor,
        action: current ? 'redirect.updated' : 'redirect.created',
        target: row.id,
        detail: {
          fromPath: value.fromPath,
          toPath: value.toPath,
          type: value.type,
          isActive: value.isActive,
        },
      })
      const { chains, more } = value.isActive ? await chainsThrough(trx, active) : { chains: [], more: false }
      return { redirect: presentRedirect(row), chains, moreChains: more }
    })
  }

  const getRedirect = async (id: string): Promise<Redirect> => {
    const row = await db.selectFrom('redirects').selectAll().where('id', '=', id).executeTakeFirst()
    if (!row) throw new NotFoundError(`Redirect '${id}' not found`)
    return presentRedirect(row)
  }

  return {
    getRedirect,

    /** A redirect as its edit form shows it: paths as a person types them (a literal `%` as `%25`). */
    getRedirectForEditing: async (id: string): Promise<Redirect> => {
      const redirect = await getRedirect(id)
      return {
        ...redirect,
        fromPath: redirectPathForEntry(redirect.fromPath),
        toPath: redirectPathForEntry(redirect.toPath),
      }
    },

    /** Creates a redirect; a `ValidationError` says what is wrong with it (path, duplicate, loop). */
    createRedirect: (input: RedirectInput, actor: Actor = 'cli') => write(undefined, input, actor),

    /** Replaces a redirect's paths, type and active flag, under the same rules as creating one. */
    updateRedirect: (id: string, input: RedirectInput, actor: Actor = 'cli') => write(id, input, actor),

    /** Switches a redirect on or off. Loops were checked across inactive ones too, so none can appear. */
    setRedirectActive: (id: string, active: boolean, actor: Actor = 'cli'): Promise<RedirectChange> =>
      locked(async (trx) => {
        const current = await trx.selectFrom('redirects').selectAll().where('id', '=', id).executeTakeFirst()
        if (!current) throw new NotFoundError(`Redirect '${id}' not found`)
        const fields = { is_active: flag(active), updated_at: now() }
        await trx.updateTable('redirects').set(fields).where('id', '=', id).execute()
        await recordAudit(trx, {
          actor,
          action: 'redirect.updated',
          target: id,
          detail: { fromPath: current.from_path, isActive: active },
        })
        const row = { ...current, ...fields }
        if (!active) return { redirect: presentRedirect(row), chains: [], moreChains: false }
        const value = { fromPath: row.from_path, toPath: row.to_path, type: row.type, isActive: true }
        const { active: forward } = await walkFrom(trx, value, row.id)
        const { chains, more } = await chainsThrough(trx, forward)
        return { redirect: presentRedirect(row), chains, moreChains: more }
      }),

    deleteRedirect: (id: string, actor: Actor = 'cli'): Promise<Redirect> =>
      locked(async (trx) => {
        const current = await trx.selectFrom('redirects').selectAll().where('id', '=', id).executeTakeFirst()
        if (!current) throw new NotFoundError(`Redirect '${id}' not found`)
        await trx.deleteFrom('redirects').where('id', '=', id).execute()
        await recordAudit(trx, {
          actor,
          action: 'redirect.deleted',
          target: id,
          detail: { fromPath: current.from_path, toPath: current.to_path },
        })
        return presentRedirect(current)
      }),

    /**
     * The chains among the active redirects (A → B → C): how many, and the first few in the
     * redirects' order. Analysed once per content version and shared by concurrent callers. When
     * the analysis of a new version takes long (hundreds of thousands of redirects), the previous
     * report is returned after a short wait, marked `stale`, while the analysis goes on.
     */
    findChains: async (): Promise<RedirectChainsReport> => {
      const version = await contentVersion(db)
      if (analysed?.version === version) return { ...analysed.report, state: 'current' }
      let entry = analysing
      if (entry?.version !== version) {
        const started = { version, report: analyseChains(version) }
        const forget = () => {
          if (analysing === started) analysing = undefined
        }
        started.report.then(forget, forget)
        analysing = entry = started
      }
      const fresh = entry.report
      const waited = await Promise.race([
        fresh.then((report) => ({ ...report, state: 'current' as const })),
        new Promise<undefined>((resolve) =>
          setTimeout(() => resolve(undefined), FRESH_ANALYSIS_WAIT_MS).unref(),
        ),
      ])
      if (waited) return waited
      // Handled here so that a failure after the wait is not an unhandled rejection; the next page retries.
      fresh.catch(() => {})
      return analysed ? { ...analysed.report, state: 'stale' } : { count: 0, listed: [], state: 'pending' }
    },

    /**
     * Points every chained active redirect straight at where its chain ends, so that clients need
     * one hop, with the answer they got before: a flattened redirect is permanent only when every
     * link it replaces was (a chain through a temporary redirect answered 302, and still does).
     * Returns how many redirects changed, and how many of those became temporary.
     */
    flattenChains: (actor: Actor = 'cli'): Promise<RedirectFlatteningResult> =>
      bulkCommit(
        () =>
          optimistic(
            async (reader) => {
              const graph = new RedirectGraph()
              // The temporary redirects, by path number: one list of numbers, however many there are.
              let temporary = new Int32Array(1 << 10)
              let temporaryCount = 0
              for await (const rows of redirectBatches(reader, { activeOnly: true }))
                for (const row of rows) {
                  const from = graph.paths.intern(row.from_path)
                  if (!graph.addNodes(from, graph.paths.intern(row.to_path)) || row.type !== 'temporary')
                    continue
                  if (temporaryCount === temporary.length) temporary = grown(temporary, temporaryCount + 1)
                  temporary[temporaryCount++] = from
                }
              const isTemporary = new Uint8Array(graph.paths.size)
              for (let i = 0; i < temporaryCount; i++) isTemporary[temporary[i] as number] = 1
              return flatteningYielding(await resolveYielding(graph), (node) => isTemporary[node] === 1)
            },
            async (trx, updates) => {
              const timestamp = now()
              // Redirects that end at the same place with the same type (every link of one long
              // chain) share one statement per batch; the rest get their own destination through a
              // CASE, in small batches, as a CASE costs each row one comparison per branch.
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
                    await trx
                      .updateTable('redirects')
                      .set({ to_path: toPath, type, updated_at: timestamp })
                      .where('from_path', 'in', sources.slice(i, i + WRITE_BATCH))
                      .execute()
                    await nextTurn()
                  }
                }
                for (let i = 0; i < singles.length; i += CASE_BATCH) {
                  const batch = singles.slice(i, i + CASE_BATCH)
                  const destinations = sql.join(
                    batch.map(
                      (update) =>
                        sql`when ${sql.ref('from_path')} = ${update.fromPath} then ${update.toPath}`,
                    ),
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
            },
          ),
        (result) => result.changed,
      ),

    /**
     * Every redirect as CSV (`fromPath,toPath,type,isActive`), oldest first, streamed in batches;
     * `importCsv` reads it back (a literal `%` in a path is written `%25`, as it is typed).
     */
    exportCsv: (): Readable =>
      Readable.from(
        (async function* () {
          yield stringify([[...CSV_COLUMNS]])
          for await (const rows of redirectBatches(db)) {
            yield stringify(
              rows.map((row) => [
                redirectPathForEntry(row.from_path),
                redirectPathForEntry(row.to_path),
                row.type,
                Number(row.is_active) === 1 ? 'true' : 'false',
              ]),
            )
          }
        })(),
        { objectMode: false },
      ),

    /**
     * Adds and updates redirects from CSV, all or nothing: rows are matched to existing redirects by
     * `fromPath`; redirects missing from the file are left alone. The header names the columns
     * (`fromPath` and `toPath` required; `type` and `isActive` optional, defaulting to `permanent`
     * and `true`, and a row may leave them out). Every problem, loops included, is reported with
     * its line, and then nothing is written.
     */
    importCsv: async (text: string, actor: Actor = 'cli'): Promise<RedirectImportResult> => {
      const { rows, problems } = await readCsv(text)
      // Rows with problems are left out of the loop check; the loops among the rest are reported too.
      const valid = rows.filter((row) => row.problems === 0)
      if (problems.length > 0 && valid.length === 0) throw importError(problems.map((p) => p.text))
      const inFile = new Map<string, CsvRow>()
      for (const row of valid) {
        if (inFile.size % ROWS_PER_TURN === 0) await nextTurn()
        inFile.set(row.value.fromPath, row)
      }
      return bulkCommit(
        () =>
          optimistic(
            async (reader) => {
              // Loops count inactive redirects too: activating one later must not be able to close a loop.
              // Both graphs number the paths in one table: each path is stored and looked up once.
              const all = new RedirectGraph()
              const active = new RedirectGraph(all.paths)
              const add = (fromPath: string, toPath: string, isActive: boolean) => {
                const from = all.paths.intern(fromPath)
                const to = all.paths.intern(toPath)
                all.addNodes(from, to)
                if (isActive) active.addNodes(from, to)
              }
              for await (const batch of redirectBatches(reader)) {
                for (const row of batch) {
                  if (!inFile.has(row.from_path)) add(row.from_path, row.to_path, Number(row.is_active) === 1)
                }
              }
              for (const [index, { value }] of valid.entries()) {
                if (index % ROWS_PER_TURN === 0) await nextTurn()
                add(value.fromPath, value.toPath, value.isActive)
              }
              await resolveYielding(all)
              const found = [...problems]
              for (const loop of all.loops()) {
                const row = loop
                  .slice(0, -1)
                  .map((path) => inFile.get(path))
                  .filter((candidate) => candidate !== undefined)
                  .sort((a, b) => a.line - b.line)[0]
                // A loop among stored redirects alone predates this file; refusing it would not fix it.
                if (row === undefined) continue
                found.push({
                  line: row.line,
                  text: `line ${row.line}: this would make a redirect loop (${describeLoop(loop, row.value.fromPath)})`,
                })
              }
              if (found.length > 0)
                throw importError(found.sort((a, b) => a.line - b.line).map((p) => p.text))
              await resolveYielding(active)
              return active.chainCount()
            },
            async (trx, chainCount) => {
              const timestamp = now()
              const result = { created: 0, updated: 0, unchanged: 0, chainCount }
              const changed: Row[] = []
              for (let i = 0; i < valid.length; i += WRITE_BATCH) {
                // SQLite answers synchronously: without a turn between statements nothing else would run.
                await nextTurn()
                const batch = valid.slice(i, i + WRITE_BATCH)
                const existing = new Map(
                  (
                    await trx
                      .selectFrom('redirects')
                      .select(['from_path', 'to_path', 'type', 'is_active'])
                      .where(
                        'from_path',
                        'in',
                        batch.map(({ value }) => value.fromPath),
                      )
                      .execute()
                  ).map((row) => [row.from_path, row]),
                )
                for (const { value } of batch) {
                  const current = existing.get(value.fromPath)
                  const row: Row = {
                    id: newId('redirect'),
                    from_path: value.fromPath,
                    to_path: value.toPath,
                    type: value.type,
                    is_active: flag(value.isActive),
                    created_at: timestamp,
                    updated_at: timestamp,
                  }
                  if (!current) result.created++
                  else if (
                    current.to_path === row.to_path &&
                    current.type === row.type &&
                    Number(current.is_active) === row.is_active
                  ) {
                    result.unchanged++
                    continue
                  } else result.updated++
                  changed.push(row)
                }
              }
              // New rows are inserted and changed ones updated in the same statement, keyed on from_path;
              // a changed row keeps its id and creation time.
              for (let i = 0; i < changed.length; i += WRITE_BATCH) {
                await trx
                  .insertInto('redirects')
                  .values(changed.slice(i, i + WRITE_BATCH))
                  .onConflict((conflict) =>
                    conflict.column('from_path').doUpdateSet((eb) => ({
                      to_path: eb.ref('excluded.to_path'),
                      type: eb.ref('excluded.type'),
                      is_active: eb.ref('excluded.is_active'),
                      updated_at: eb.ref('excluded.updated_at'),
                    })),
                  )
                  .execute()
                await nextTurn()
              }
              await recordAudit(trx, {
                actor,
                action: 'redirects.imported',
                target: 'redirects',
                detail: { ...result },
              })
              return result
            },
          ),
        ({ created, updated }) => created + updated,
      )
    },
  }
}

function importError(problems: string[]): ValidationError {
  const listed = firstAndRemainder(problems, MAX_LISTED_PROBLEMS, 'problem')
  return new ValidationError(`The file was not imported: ${listed.join('; ')}`, listed)
}

/** A row of a CSV import: its line, the redirect as read, and how many problems it has. */
interface CsvRow {
  line: number
  value: RedirectValue
  problems: number
}

/** A problem with the line it is on, for sorting with the problems found later (loops). */
interface LineProblem {
  line: number
  text: string
}

/** `text` in slices that do not split a UTF-16 surrogate pair, for a parser fed a slice at a time. */
function* slices(text: string): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + CSV_SLICE, text.length)
    const code = text.charCodeAt(end - 1)
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end--
    yield text.slice(start, end)
    start = end
  }
}

/**
 * Reads and checks CSV text; each row keeps its line number for messages. The text is parsed a
 * slice at a time with turns of the event loop between, so a large file does not stall the server.
 */
async function readCsv(text: string): Promise<{ rows: CsvRow[]; problems: LineProblem[] }> {
  const problems: LineProblem[] = []
  const problem = (line: number, message: string) => problems.push({ line, text: `line ${line}: ${message}` })
  const parser = Readable.from(slices(text)).pipe(
    parse({ bom: true, skip_empty_lines: true, info: true, relax_column_count: true }),
  )
  const known = new Map<string, (typeof CSV_COLUMNS)[number]>(CSV_COLUMNS.map((c) => [c.toLowerCase(), c]))
  let columns: ((typeof CSV_COLUMNS)[number] | undefined)[] | undefined
  let needed = 0
  const rows: CsvRow[] = []
  const firstLine = new Map<string, number>()
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[]
      info: { lines: number }
    }>) {
      const line = info.lines
      if (columns === undefined) {
        columns = record.map((name) => known.get(name.trim().toLowerCase()))
        record.forEach((name, index) => {
          if (columns?.[index] === undefined)
            problem(1, `unknown column '${name}' (the columns are ${CSV_COLUMNS.join(', ')})`)
        })
        for (const required of ['fromPath', 'toPath'] as const)
          if (!columns.includes(required)) problem(1, `the header has no '${required}' column`)
        if (problems.length > 0) return { rows: [], problems }
        // Optional columns may be left off the end of a row; the required ones may not.
        needed = Math.max(columns.indexOf('fromPath'), columns.indexOf('toPath')) + 1
        continue
      }
      if (rows.length % ROWS_PER_TURN === 0) await nextTurn()
      const before = problems.length
      if (record.length > columns.length || record.length < needed) {
        const expected = needed === columns.length ? `${needed}` : `${needed} to ${columns.length}`
        problem(line, `expected ${expected} values, found ${record.length}`)
        continue
      }
      const cell = (column: (typeof CSV_COLUMNS)[number]) => {
        const index = columns?.indexOf(column) ?? -1
        return index === -1 ? '' : (record[index] ?? '')
      }
      const active = cell('isActive').trim().toLowerCase()
      if (active !== '' && active !== 'true' && active !== 'false')
        problem(line, `isActive must be 'true' or 'false', not '${cell('isActive')}'`)
      const { value, problems: found } = checkRedirectInput({
        fromPath: cell('fromPath'),
        toPath: cell('toPath'),
        type: cell('type'),
        isActive: active !== 'false',
      })
      for (const text of found) problem(line, text)
      const earlier = firstLine.get(value.fromPath)
      if (earlier !== undefined) problem(line, `${value.fromPath} appears again (first on line ${earlier})`)
      else firstLine.set(value.fromPath, line)
      rows.push({ line, value, problems: problems.length - before })
    }
  } catch (error) {
    if (error instanceof CsvError)
      return { rows: [], problems: [{ line: 0, text: `the file is not valid CSV: ${error.message}` }] }
    throw error
  }
  if (columns === undefined)
    return {
      rows: [],
      problems: [{ line: 0, text: 'the file is empty: it needs a header line and one line per redirect' }],
    }
  if (rows.length === 0 && problems.length === 0)
    problems.push({ line: 1, text: 'the file has a header but no redirects' })
  return { rows, problems }
}

export type RedirectService = ReturnType<typeof createRedirectService>
