import type { Kysely } from 'kysely'
import { readKindVersion } from '../../db/content-version.js'
import { redirectBatches } from '../../db/repositories/redirects.js'
import type { Database } from '../../db/tables.js'
import { settledWithin } from '../../deadline.js'
import { describeRedirectRoute, type RedirectChainSummary, RedirectGraph, resolveYielding } from './rules.js'

/** Chains a chain report lists. */
export const LISTED_CHAINS = 10
/** How long a dashboard page waits for a fresh chain analysis before showing the previous one. */
const FRESH_ANALYSIS_WAIT_MS = 400

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

type ChainAnalysis = Omit<RedirectChainsReport, 'state'>

/** A chain for a message or a list: `/a → /b → /c`, shortened in the middle when long. */
export const describeChain = (chain: RedirectChainSummary): string =>
  describeRedirectRoute(chain.head, chain.hops + 1, chain.finalPath)

/** The chains among the active redirects now; the whole set is read in batches (see `redirectBatches`). */
export async function analyseChains(db: Kysely<Database>): Promise<ChainAnalysis> {
  const graph = new RedirectGraph()
  for await (const rows of redirectBatches(db, { activeOnly: true }))
    for (const row of rows) graph.add(row.from_path, row.to_path)
  await resolveYielding(graph)
  const listed: RedirectChainSummary[] = []
  for (const chain of graph.chains()) {
    if (listed.length === LISTED_CHAINS) break
    listed.push(chain)
  }
  return { count: graph.chainCount(), listed }
}

/**
 * The chain report (A → B → C) of `db`'s redirects, cached per content version and shared by
 * concurrent callers. When the analysis of a new version takes long (hundreds of thousands of
 * redirects), the previous report is returned after a short wait, marked `stale`, while the
 * analysis goes on.
 */
export function createChainReports(db: Kysely<Database>): {
  findChains: () => Promise<RedirectChainsReport>
} {
  let analysed: { version: number; report: ChainAnalysis } | undefined
  let analysing: { version: number; report: Promise<ChainAnalysis> } | undefined

  async function analyse(version: number): Promise<ChainAnalysis> {
    const report = await analyseChains(db)
    if (analysed === undefined || analysed.version < version) analysed = { version, report }
    return report
  }

  async function findChains(): Promise<RedirectChainsReport> {
    const version = await readKindVersion(db, 'redirects')
    if (analysed?.version === version) return { ...analysed.report, state: 'current' }
    let entry = analysing
    if (entry?.version !== version) {
      const started = { version, report: analyse(version) }
      const forget = () => {
        if (analysing === started) analysing = undefined
      }
      started.report.then(forget, forget)
      analysing = entry = started
    }
    const fresh = entry.report
    const waited = await settledWithin(
      fresh.then((report) => ({ ...report, state: 'current' as const })),
      FRESH_ANALYSIS_WAIT_MS,
    )
    if (waited) return waited
    // Handled here so that a failure after the wait is not an unhandled rejection; the next page retries.
    fresh.catch(() => {})
    return analysed ? { ...analysed.report, state: 'stale' } : { count: 0, listed: [], state: 'pending' }
  }

  return { findChains }
}
