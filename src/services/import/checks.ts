import { setImmediate } from 'node:timers/promises'
import type { Kysely } from 'kysely'
import { BATCH_SIZE } from '../../db/batches.js'
import { pagesWithPaths, redirectIdsFrom } from '../../db/repositories/imports.js'
import { redirectBatches } from '../../db/repositories/redirects.js'
import type { Database } from '../../db/tables.js'
import { isSafeId } from '../../ids.js'
import { describeChain } from '../redirects/chains.js'
import { describeLoop, RedirectGraph, resolveYielding } from '../redirects/rules.js'
import type { ImportKind } from './kinds.js'
import { describeLocation, type FieldProblem, type Location } from './locations.js'
import type { RecordIndex } from './record-index.js'
import type { RecordSource } from './sources.js'

/** Where the checks that need every record put what they find. */
export interface Findings {
  report(location: Location, problem: FieldProblem): void
  warn(location: Location, problem: FieldProblem): void
  /** Where the record of `kind` at `order` is (kept records remember only their order). */
  locate(order: number, kind: ImportKind): Location
}

/** Distinct form ids referenced before their form was seen; beyond this a second pass checks them. */
const MAX_PENDING_FORM_IDS = 100_000

/**
 * Checks that every submission names a form of the database or of the file. Submissions are not
 * kept, so only the ids they name before their form appears are noted while streaming; when any
 * remains unknown at the end, a second read finds the lines that name it.
 */
export class FormReferences {
  private readonly pending = new Set<string>()
  private overflow = false

  constructor(
    private readonly databaseFormIds: ReadonlySet<string>,
    private readonly importedForms: { has(id: string): boolean },
  ) {}

  /** Notes the form a valid-looking submission names. */
  note(formId: string): void {
    if (formId === '' || this.exists(formId) || this.pending.has(formId)) return
    if (this.pending.size < MAX_PENDING_FORM_IDS) this.pending.add(formId)
    else this.overflow = true
  }

  /** Reports every submission whose form exists neither in the database nor among the kept forms. */
  async check(source: RecordSource, findings: Findings): Promise<void> {
    const unresolved = [...this.pending].some((id) => !this.importedForms.has(id))
    if (!unresolved && !this.overflow) return
    for await (const batch of source.entries()) {
      for (const entry of batch) {
        if ('problem' in entry || entry.kind !== 'submission') continue
        const formId = entry.record.formId
        // An id outside the id alphabet was refused already, for what it is.
        if (isSafeId(formId) && !this.exists(formId)) {
          findings.report(entry.location, { field: 'formId', message: `'${formId}' does not exist` })
        }
      }
    }
  }

  private exists(id: string): boolean {
    return this.databaseFormIds.has(id) || this.importedForms.has(id)
  }
}

/** Refuses a page whose path another page of the file, or one in the database it does not replace, has. */
export async function checkPagePaths(
  db: Kysely<Database>,
  pages: RecordIndex<'path'>,
  findings: Findings,
): Promise<void> {
  const paths = pages.values
  // Per path number, the first page in file order that has it; later ones are the duplicates.
  const holderOf = new Int32Array(paths.size).fill(-1)
  const holders = new Uint32Array(pages.size)
  let holderCount = 0
  for (const slot of pages.inFileOrder()) {
    if (!pages.isRead(slot, 'path')) continue
    const path = pages.valueAt(slot, 'path')
    const holder = holderOf[path] as number
    if (holder !== -1) {
      findings.report(findings.locate(pages.orderAt(slot), 'page'), {
        field: 'path',
        message: `'${paths.get(path)}' is already the path of the page at ${describeLocation(findings.locate(pages.orderAt(holder), 'page'))}`,
      })
      continue
    }
    holderOf[path] = slot
    holders[holderCount++] = slot
  }
  for (let start = 0; start < holderCount; start += BATCH_SIZE) {
    const byPath = new Map<string, number>()
    for (const slot of holders.subarray(start, Math.min(start + BATCH_SIZE, holderCount)))
      byPath.set(pages.fieldAt(slot, 'path'), slot)
    const rows = await pagesWithPaths(db, [...byPath.keys()])
    for (const row of rows) {
      // A row this import replaces gives up its path; the file's own duplicates were found above.
      if (pages.has(row.id)) continue
      const slot = byPath.get(row.path)
      if (slot !== undefined) {
        findings.report(findings.locate(pages.orderAt(slot), 'page'), {
          field: 'path',
          message: `'${row.path}' is already the path of page '${row.id}' in the database`,
        })
      }
    }
  }
}

/** Chains looked at between two turns of the event loop, so that the server answers meanwhile. */
const TURN_EVERY = 5000

/**
 * The redirect rules over the file's redirects and the stored ones they do not replace:
 * a `fromPath` is redirected once, loops are refused, chains are warned about. Linear in the number
 * of redirects: the stored ones are read in keyed batches (the server goes on answering meanwhile)
 * into one {@link RedirectGraph}, which finds every loop and chain in a single pass. Every path is
 * a number of the kept redirects' table, and what is known per path sits in typed arrays.
 */
export async function checkRedirects(
  db: Kysely<Database>,
  redirects: RecordIndex<'fromPath' | 'toPath'>,
  findings: Findings,
): Promise<void> {
  if (redirects.size === 0) return
  const paths = redirects.values
  const inFileOrder = redirects.inFileOrder()
  const location = (slot: number) => findings.locate(redirects.orderAt(slot), 'redirect')
  const importedFrom = new Uint8Array(paths.size)
  for (const slot of inFileOrder)
    if (redirects.isRead(slot, 'fromPath')) importedFrom[redirects.valueAt(slot, 'fromPath')] = 1
  // Stored rows go first, so that a clash is reported on the file's record, which is what can change.
  // Inactive redirects count too: switching one on later must not be able to close a loop.
  const graph = new RedirectGraph(paths)
  const storedHolders = new Map<number, string>()
  for await (const rows of redirectBatches(db)) {
    for (const row of rows) {
      if (redirects.has(row.id)) continue
      const from = paths.intern(row.from_path)
      graph.addNodes(from, paths.intern(row.to_path))
      if (importedFrom[from] === 1) storedHolders.set(from, row.id)
    }
  }
  /** Per path number: the slot of the file's record that redirects it in the graph, or -1. */
  const heldBy = new Int32Array(paths.size).fill(-1)
  for (const slot of inFileOrder) {
    if (!redirects.isRead(slot, 'fromPath')) continue
    const from = redirects.valueAt(slot, 'fromPath')
    const storedId = storedHolders.get(from)
    const earlier = heldBy[from] as number
    if (storedId === undefined && earlier === -1) {
      heldBy[from] = slot
      // A redirect whose toPath could not be read still holds its fromPath, but leads nowhere known.
      if (redirects.isRead(slot, 'toPath')) graph.addNodes(from, redirects.valueAt(slot, 'toPath'))
      continue
    }
    const other =
      storedId === undefined
        ? `the redirect at ${describeLocation(location(earlier))}`
        : `redirect '${storedId}' in the database`
    findings.report(location(slot), {
      field: 'fromPath',
      message: `'${paths.get(from)}' is already redirected by ${other}`,
    })
  }
  await resolveYielding(graph)

  for (const loop of graph.loopNodes()) {
    let culprit = -1
    for (const node of loop.slice(0, -1)) {
      const slot = heldBy[node] as number
      if (slot !== -1 && (culprit === -1 || redirects.orderAt(slot) < redirects.orderAt(culprit)))
        culprit = slot
    }
    // A loop made only of stored rows predates this import; refusing the import would not fix it.
    if (culprit === -1) continue
    findings.report(location(culprit), {
      field: 'toPath',
      message: `creates a redirect loop: ${describeLoop(
        loop.map((node) => paths.get(node)),
        redirects.fieldAt(culprit, 'fromPath'),
      )}`,
    })
  }

  // A chain is the file's doing when it starts at, or passes through, one of the file's records.
  const firstImported = graph.firstMarkedNodes((node) => heldBy[node] !== -1)
  const chainStarts: number[] = []
  const culprits: number[] = []
  let seen = 0
  for (const start of graph.chainStarts()) {
    if (++seen % TURN_EVERY === 0) await setImmediate()
    const path = firstImported[start] as number
    if (path === -1) continue
    chainStarts.push(start)
    culprits.push(heldBy[path] as number)
  }
  const storedStarts = chainStarts.filter((start) => heldBy[start] === -1).map((start) => paths.get(start))
  const storedIds = await redirectIdsFrom(db, storedStarts)
  for (const [index, start] of chainStarts.entries()) {
    if (index % TURN_EVERY === 0) await setImmediate()
    const chain = graph.chainAt(start)
    const origin =
      heldBy[start] === -1 ? ` (starting at redirect '${storedIds.get(chain.fromPath)}' in the database)` : ''
    findings.warn(location(culprits[index] as number), {
      message: `redirect chain ${describeChain(chain)}${origin}; consider pointing '${chain.fromPath}' straight at '${chain.finalPath}'`,
    })
  }
}
