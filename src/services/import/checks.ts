import { setImmediate } from 'node:timers/promises'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/tables.js'
import { isSafeId } from '../../ids.js'
import { describeLoop, type RedirectChainSummary, RedirectGraph, resolveYielding } from '../redirect-rules.js'
import { describeChain, redirectBatches } from '../redirects.js'
import { BATCH_SIZE, chunks } from './batches.js'
import type { KeptRecords } from './kept.js'
import type { ImportKind } from './kinds.js'
import { byOrder, describeLocation, type FieldProblem, type Location } from './locations.js'
import type { RecordSource } from './sources.js'

/**
 * A kept redirect as the redirect checks read it: its paths, and a location rebuilt only when there
 * is something to say about it (a million of these stay small).
 */
class KeptRedirect {
  constructor(
    readonly fromPath: string,
    readonly toPath: string,
    readonly order: number,
    private readonly findings: Findings,
  ) {}

  /** The record's fields, as the checks name them. */
  get draft(): { fromPath: string; toPath: string } {
    return this
  }

  get location(): Location {
    return this.findings.locate(this.order, 'redirect')
  }
}

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
  pages: KeptRecords<'path'>,
  findings: Findings,
): Promise<void> {
  // Sorted by path (no second map of a million paths): a path's pages are neighbours, first in file
  // order first. `holders` are the first page of each path, still sorted by path.
  const holders: number[] = []
  let previous: number | undefined
  for (const slot of pages.byField('path')) {
    const path = pages.fieldAt(slot, 'path')
    if (previous !== undefined && pages.fieldAt(previous, 'path') === path) {
      findings.report(findings.locate(pages.orderAt(slot), 'page'), {
        field: 'path',
        message: `'${path}' is already the path of the page at ${describeLocation(findings.locate(pages.orderAt(previous), 'page'))}`,
      })
      continue
    }
    holders.push(slot)
    previous = slot
  }
  for (const batch of chunks(holders, BATCH_SIZE)) {
    const byPath = new Map(batch.map((slot) => [pages.fieldAt(slot, 'path'), slot]))
    const rows = await db
      .selectFrom('pages')
      .select(['id', 'path'])
      .where('path', 'in', [...byPath.keys()])
      .execute()
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
 * The redirect rules of SPEC §2 over the file's redirects and the stored ones they do not replace:
 * a `fromPath` is redirected once, loops are refused, chains are warned about. Linear in the number
 * of redirects: the stored ones are read in keyed batches (the server goes on answering meanwhile)
 * into one {@link RedirectGraph}, which finds every loop and chain in a single pass.
 */
export async function checkRedirects(
  db: Kysely<Database>,
  redirects: KeptRecords<'fromPath' | 'toPath'>,
  findings: Findings,
): Promise<void> {
  if (redirects.size === 0) return
  const imported = Array.from(
    redirects.inFileOrder(),
    (slot) =>
      new KeptRedirect(
        redirects.fieldAt(slot, 'fromPath'),
        redirects.fieldAt(slot, 'toPath'),
        redirects.orderAt(slot),
        findings,
      ),
  )
  const importedPaths = new Set(imported.map(({ draft }) => draft.fromPath))
  // Stored rows go first, so that a clash is reported on the file's record, which is what can change.
  // Inactive redirects count too: switching one on later must not be able to close a loop.
  const graph = new RedirectGraph()
  const storedHolders = new Map<string, string>()
  for await (const rows of redirectBatches(db)) {
    for (const row of rows) {
      if (redirects.has(row.id)) continue
      graph.add(row.from_path, row.to_path)
      if (importedPaths.has(row.from_path)) storedHolders.set(row.from_path, row.id)
    }
  }
  /** The file's records that are part of the graph, by `fromPath`. */
  const held = new Map<string, KeptRedirect>()
  for (const record of imported) {
    const { fromPath, toPath } = record.draft
    const storedId = storedHolders.get(fromPath)
    const earlier = held.get(fromPath)
    if (storedId === undefined && earlier === undefined) {
      held.set(fromPath, record)
      graph.add(fromPath, toPath)
      continue
    }
    const other =
      storedId === undefined && earlier
        ? `the redirect at ${describeLocation(earlier.location)}`
        : `redirect '${storedId}' in the database`
    findings.report(record.location, {
      field: 'fromPath',
      message: `'${fromPath}' is already redirected by ${other}`,
    })
  }
  await resolveYielding(graph)

  for (const loop of graph.loops()) {
    const culprit = loop
      .slice(0, -1)
      .map((path) => held.get(path))
      .filter((record) => record !== undefined)
      .sort(byOrder)[0]
    // A loop made only of stored rows predates this import; refusing the import would not fix it.
    if (!culprit) continue
    findings.report(culprit.location, {
      field: 'toPath',
      message: `creates a redirect loop: ${describeLoop(loop, culprit.draft.fromPath)}`,
    })
  }

  // A chain is the file's doing when it starts at, or passes through, one of the file's records.
  const firstImported = graph.firstMarkedOnRoute((path) => held.has(path))
  const chains: { chain: RedirectChainSummary; culprit: KeptRedirect; stored: boolean }[] = []
  for (const chain of graph.chains()) {
    if (chains.length % TURN_EVERY === 0) await setImmediate()
    const path = firstImported(chain.fromPath)
    const culprit = path === undefined ? undefined : held.get(path)
    if (culprit) chains.push({ chain, culprit, stored: !held.has(chain.fromPath) })
  }
  const storedIds = new Map<string, string>()
  const storedStarts = chains.filter(({ stored }) => stored).map(({ chain }) => chain.fromPath)
  for (const paths of chunks(storedStarts, BATCH_SIZE)) {
    const rows = await db
      .selectFrom('redirects')
      .select(['id', 'from_path'])
      .where('from_path', 'in', paths)
      .execute()
    for (const row of rows) storedIds.set(row.from_path, row.id)
  }
  for (const [index, { chain, culprit, stored }] of chains.entries()) {
    if (index % TURN_EVERY === 0) await setImmediate()
    const origin = stored ? ` (starting at redirect '${storedIds.get(chain.fromPath)}' in the database)` : ''
    findings.warn(culprit.location, {
      message: `redirect chain ${describeChain(chain)}${origin}; consider pointing '${chain.fromPath}' straight at '${chain.finalPath}'`,
    })
  }
}
