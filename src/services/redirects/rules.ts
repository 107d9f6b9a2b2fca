import type { RedirectType } from '../../schemas.js'
import { grown, StringTable } from '../../string-table.js'
/**
 * The redirect rules (docs/redirects.md) as pure functions over plain `{ fromPath, toPath }` pairs, so that
 * the importer, the dashboard and the CLI all judge redirects the same way, without I/O.
 *
 * Everything here is linear in the number of redirects: an editor can import a chain of a hundred
 * thousand links, and analysing it must not cost the square of that.
 */

/** The two paths of a redirect; anything else a caller's objects carry is ignored. */
export interface RedirectEdge {
  fromPath: string
  toPath: string
}

/**
 * A redirect whose destination is itself redirected: `fromPath` → `via…` → `finalPath`.
 * `via` is computed each time it is read (it is as long as the chain), so that listing every chain
 * of a long one does not cost the square of its length unless someone reads every route.
 */
export interface RedirectChain {
  fromPath: string
  /** The intermediate paths, in the order a client would be sent through them. */
  readonly via: string[]
  finalPath: string
}

/**
 * A chain as the dashboard and the importer report it, whatever its length: where it starts, the
 * number of redirects a visitor follows (2 or more), its first paths, and where it ends.
 */
export interface RedirectChainSummary {
  fromPath: string
  hops: number
  /** The first paths of the route, starting with `fromPath`: at most {@link ROUTE_HEAD}. */
  head: string[]
  finalPath: string
}

/** Routes longer than this many paths are shortened in messages: the first few, a count, the last. */
export const ROUTE_HEAD = 6

/**
 * A route (`/a → /b → /c`) for a message, shortened in the middle when long:
 * `/m0 → /m1 → … 99,994 more … → /m99999`. `head` holds its first paths, `length` how many paths it
 * has in all, `last` its last path.
 */
export function describeRedirectRoute(head: readonly string[], length: number, last: string): string {
  if (length <= ROUTE_HEAD + 1) return [...head.slice(0, length - 1), last].join(' → ')
  const shown = head.slice(0, ROUTE_HEAD)
  const hidden = length - shown.length - 1
  return `${shown.join(' → ')} → … ${hidden.toLocaleString('en-US')} more … → ${last}`
}

/** A loop (`[a, b, a]`) told from `start`, one of its paths: `[start, …, start]`. */
export function rotateLoop(loop: readonly string[], start: string): string[] {
  const cycle = loop.slice(0, -1)
  const at = Math.max(cycle.indexOf(start), 0)
  const rotated = [...cycle.slice(at), ...cycle.slice(0, at)]
  return [...rotated, rotated[0] as string]
}

/** A loop for a message, told from `start`, shortened when long. */
export function describeLoop(loop: readonly string[], start: string): string {
  const rotated = rotateLoop(loop, start)
  return describeRedirectRoute(rotated.slice(0, ROUTE_HEAD), rotated.length, start)
}

/** `final` of a redirect whose route never lands (it is in a loop, or leads into one). */
const LOOPS = -2
/** `final` of a redirect not resolved yet. */
const UNRESOLVED = -1
/** `final` of a redirect on the walk in progress. */
const WALKING = -3
/** Steps of work between two pauses of {@link RedirectGraph.resolving}. */
const STEPS_PER_PAUSE = 20_000

/**
 * The redirects as a graph of paths, analysed in linear time and memory: each path is a number
 * (from a {@link StringTable}, which packs the paths' bytes outside the JavaScript heap), every
 * per-path fact sits in a typed array, and resolving walks each redirect once, remembering where
 * it lands (its final destination) and how many redirects that takes, so no chain is ever walked
 * twice. A million redirects cost some tens of megabytes, and nothing the garbage collector traces.
 *
 * Add the redirects (`add`), then resolve them: `resolve()` at once, or `resolving()` step by step
 * for a caller that must pause between steps (a server answering other requests meanwhile).
 */
export class RedirectGraph {
  /** Every path the graph has met, numbered: a node of the graph is a path's number. */
  readonly paths: StringTable
  /** Per path: the path its redirect points to, or -1 when it is not redirected. */
  private next = new Int32Array(1 << 10)
  /** How many paths `next` covers; the table may number more paths than the graph has met. */
  private nodes = 0
  /** The redirected paths, in the order their redirects were added. */
  private sources = new Int32Array(1 << 10)
  private sourceCount = 0
  /** Per path: where its route ends, {@link LOOPS}, {@link UNRESOLVED} or {@link WALKING}. */
  private final = new Int32Array(0)
  /** Per path: how many redirects its route follows. */
  private hops = new Int32Array(0)
  /** Paths in the order they were resolved: each one after the path it points to, loops aside. */
  private resolvedOrder = new Int32Array(0)
  private resolvedCount = 0
  private loopList: number[][] = []
  private resolved = false

  /**
   * `paths` numbers the paths; a caller that already numbered some (the importer's kept redirects)
   * passes its table, so that both speak of a path by the same number.
   */
  constructor(paths: StringTable = new StringTable()) {
    this.paths = paths
  }

  /** A graph of `redirects`, resolved. */
  static of(redirects: Iterable<RedirectEdge>): RedirectGraph {
    const graph = new RedirectGraph()
    for (const { fromPath, toPath } of redirects) graph.add(fromPath, toPath)
    return graph.resolve()
  }

  /** Adds a redirect. `fromPath` is unique among valid redirects; should it repeat, the first one wins. */
  add(fromPath: string, toPath: string): void {
    this.addNodes(this.paths.intern(fromPath), this.paths.intern(toPath))
  }

  /**
   * Adds a redirect between two numbered paths (numbers of {@link paths}). Returns false, adding
   * nothing, when `from` is redirected already: the first redirect of a path wins.
   */
  addNodes(from: number, to: number): boolean {
    this.reach(Math.max(from, to) + 1)
    if (this.next[from] !== -1) return false
    this.next[from] = to
    if (this.sourceCount === this.sources.length) this.sources = grown(this.sources, this.sourceCount + 1)
    this.sources[this.sourceCount++] = from
    this.resolved = false
    return true
  }

  /** How many redirects the graph holds. */
  get size(): number {
    return this.sourceCount
  }

  /** True when `path` is the `fromPath` of one of the redirects. */
  redirects(path: string): boolean {
    return this.isRedirected(this.paths.find(path))
  }

  /** True when the path numbered `node` is the `fromPath` of one of the redirects. */
  isRedirected(node: number): boolean {
    return node >= 0 && node < this.nodes && this.next[node] !== -1
  }

  /** Resolves every redirect at once. */
  resolve(): this {
    for (const _ of this.resolving()) {
      // Nothing to do between steps: run to the end.
    }
    return this
  }

  /**
   * Resolves every redirect, pausing (yielding) after every few thousand steps of work so that a
   * caller can let other work run; see {@link resolveYielding}.
   */
  *resolving(): Generator<void, void, void> {
    // Stryker disable next-line ConditionalExpression: a fast path; resolving again gives the same analysis
    if (this.resolved) return
    const next = this.next
    const count = this.nodes
    const final = new Int32Array(count).fill(UNRESOLVED)
    const hopCounts = new Int32Array(count)
    this.final = final
    this.hops = hopCounts
    this.resolvedOrder = new Int32Array(this.sourceCount)
    this.resolvedCount = 0
    this.loopList = []
    let steps = 0
    const walk: number[] = []
    for (let s = 0; s < this.sourceCount; s++) {
      const source = this.sources[s] as number
      // Stryker disable next-line ConditionalExpression: a resolved source walks no step and changes nothing
      if (final[source] !== UNRESOLVED) continue
      let current = source
      while (next[current] !== -1 && final[current] === UNRESOLVED) {
        final[current] = WALKING
        walk.push(current)
        current = next[current] as number
        if (++steps % STEPS_PER_PAUSE === 0) yield
      }
      let landsAt: number
      let hops: number
      if (next[current] === -1) {
        landsAt = current
        hops = 0
      } else if (final[current] === WALKING) {
        // The walk met itself: a loop from `current` round to `current`.
        const start = walk.lastIndexOf(current)
        const loop = walk.slice(start)
        this.loopList.push([...loop, current])
        landsAt = LOOPS
        hops = 0
      } else {
        landsAt = final[current] as number
        hops = hopCounts[current] as number
      }
      for (let i = walk.length - 1; i >= 0; i--) {
        const node = walk[i] as number
        hops += 1
        final[node] = landsAt
        hopCounts[node] = hops
        this.resolvedOrder[this.resolvedCount++] = node
        if (++steps % STEPS_PER_PAUSE === 0) yield
      }
      walk.length = 0
    }
    this.resolved = true
  }

  /**
   * Every redirect loop, each as the paths a client would visit, ending where it started:
   * `/a → /b → /a` is `['/a', '/b', '/a']` and a redirect to itself is `['/a', '/a']`. Each loop is
   * listed once, starting at the first of its paths reached when walking the redirects in the order
   * they were added.
   */
  loops(): string[][] {
    return this.loopNodes().map((loop) => loop.map((node) => this.paths.get(node)))
  }

  /** {@link loops} as path numbers. */
  loopNodes(): readonly (readonly number[])[] {
    this.assertResolved()
    return this.loopList
  }

  /** How many redirects form chains: their destination is redirected, and the route lands. */
  chainCount(): number {
    this.assertResolved()
    let count = 0
    for (let s = 0; s < this.sourceCount; s++) if (this.isChained(this.sources[s] as number)) count++
    return count
  }

  /** The chains, in the order their redirects were added; each summary costs a few steps. */
  *chains(): Generator<RedirectChainSummary, void, void> {
    for (const node of this.chainStarts()) yield this.summary(node)
  }

  /** The paths (numbers) that start chains, in the order their redirects were added. */
  *chainStarts(): Generator<number, void, void> {
    this.assertResolved()
    for (let s = 0; s < this.sourceCount; s++) {
      const source = this.sources[s] as number
      if (this.isChained(source)) yield source
    }
  }

  /** The chain starting at `fromPath`, or `undefined` when that redirect is not chained. */
  chainFrom(fromPath: string): RedirectChainSummary | undefined {
    this.assertResolved()
    const id = this.paths.find(fromPath)
    return id !== -1 && this.isChained(id) ? this.summary(id) : undefined
  }

  /** The chain starting at the path numbered `node`, which must start one (see {@link chainStarts}). */
  chainAt(node: number): RedirectChainSummary {
    this.assertResolved()
    return this.summary(node)
  }

  /** The paths a client passes through from `fromPath` to the end of its chain, both excluded. */
  via(fromPath: string): string[] {
    const id = this.paths.find(fromPath)
    // Stryker disable next-line ConditionalExpression: the walk below lists nothing for such a path either
    if (!this.isRedirected(id)) return []
    const via: string[] = []
    for (let node = this.next[id] as number; this.isRedirected(node); node = this.next[node] as number) {
      via.push(this.paths.get(node))
      if (via.length > this.nodes) break
    }
    return via
  }

  /**
   * For every redirect, the first path along its route (itself included) that `marked` holds,
   * computed once per path: the redirects are visited so that each is seen after the path it
   * points to. Redirects in or into a loop get `undefined` unless marked themselves.
   */
  firstMarkedOnRoute(marked: (path: string) => boolean): (fromPath: string) => string | undefined {
    const first = this.firstMarkedNodes((node) => marked(this.paths.get(node)))
    return (fromPath) => {
      const id = this.paths.find(fromPath)
      const found = id === -1 || id >= first.length ? -1 : (first[id] as number)
      return found === -1 ? undefined : this.paths.get(found)
    }
  }

  /** {@link firstMarkedOnRoute} by path numbers: per path, the first marked one on its route, or -1. */
  firstMarkedNodes(marked: (node: number) => boolean): Int32Array {
    this.assertResolved()
    const first = new Int32Array(this.nodes).fill(-1)
    for (let i = 0; i < this.resolvedCount; i++) {
      const node = this.resolvedOrder[i] as number
      if (marked(node)) first[node] = node
      else if (this.final[node] !== LOOPS) first[node] = first[this.next[node] as number] as number
    }
    return first
  }

  /** The updates that point every chained redirect straight at its final destination. */
  flattening(): RedirectEdge[] {
    return Array.from(this.chainStarts(), (node) => this.flatteningAt(node))
  }

  /** The update that points the chain starting at the path numbered `node` at its final destination. */
  flatteningAt(node: number): RedirectEdge {
    this.assertResolved()
    return { fromPath: this.paths.get(node), toPath: this.paths.get(this.final[node] as number) }
  }

  /** The path the redirect of the path numbered `node` points to (its own destination, not its chain's end). */
  destinationOf(node: number): string {
    return this.paths.get(this.next[node] as number)
  }

  private isChained(id: number): boolean {
    return (this.hops[id] as number) >= 2 && this.final[id] !== LOOPS
  }

  private summary(id: number): RedirectChainSummary {
    const head: string[] = []
    for (let node = id; head.length < ROUTE_HEAD && this.isRedirected(node); node = this.next[node] as number)
      head.push(this.paths.get(node))
    return {
      fromPath: this.paths.get(id),
      hops: this.hops[id] as number,
      head,
      finalPath: this.paths.get(this.final[id] as number),
    }
  }

  /** Makes `next` cover the first `count` paths, those not met before as not redirected. */
  private reach(count: number): void {
    if (count <= this.nodes) return
    if (count > this.next.length) this.next = grown(this.next, count)
    this.next.fill(-1, this.nodes, count)
    this.nodes = count
  }

  private assertResolved(): void {
    if (!this.resolved) throw new Error('RedirectGraph: resolve() before reading the analysis')
  }
}

/** Resolves `graph`, letting the event loop run between steps so that other requests are served. */
export async function resolveYielding(graph: RedirectGraph): Promise<RedirectGraph> {
  for (const _ of graph.resolving()) await new Promise<void>((resume) => setImmediate(resume))
  return graph
}

/** Chains turned into updates between two turns of the event loop, in {@link flatteningYielding}. */
const UPDATES_PER_TURN = 2000

/**
 * One redirect as flattening changes it: from where it pointed (and how) to the end of its chain.
 * A visitor followed every link, so the result is `permanent` only when every link was: a 302
 * somewhere along the chain must stay a 302, or browsers would cache for good an answer that was
 * meant to change.
 */
export interface RedirectFlattening {
  fromPath: string
  toPath: string
  type: RedirectType
  before: { toPath: string; type: RedirectType }
}

/**
 * The updates that point every chained redirect of a resolved graph straight at its final
 * destination, each with the type that gives visitors the answer they got before (see
 * {@link RedirectFlattening}); `isTemporary` says which redirects (by path number) are temporary.
 * Lets the event loop run every few thousand updates: a 100,000-link chain makes 100,000 updates.
 */
export async function flatteningYielding(
  graph: RedirectGraph,
  isTemporary: (node: number) => boolean,
): Promise<RedirectFlattening[]> {
  // Per redirect, the first temporary one along its route (itself included), or -1 when none is.
  const temporaryOnRoute = graph.firstMarkedNodes(isTemporary)
  const updates: RedirectFlattening[] = []
  for (const node of graph.chainStarts()) {
    if (updates.length % UPDATES_PER_TURN === UPDATES_PER_TURN - 1)
      await new Promise<void>((resume) => setImmediate(resume))
    const { fromPath, toPath } = graph.flatteningAt(node)
    updates.push({
      fromPath,
      toPath,
      type: temporaryOnRoute[node] === -1 ? 'permanent' : 'temporary',
      before: { toPath: graph.destinationOf(node), type: isTemporary(node) ? 'temporary' : 'permanent' },
    })
  }
  return updates
}

/**
 * Every redirect loop, each as the paths a client would visit, ending where it started:
 * `/a → /b → /a` is `['/a', '/b', '/a']` and a redirect to itself is `['/a', '/a']`. Each loop is
 * listed once, starting at the first of its paths reached when walking the redirects in input order.
 * Runs in linear time: each path is walked at most once.
 */
export function findRedirectLoops(redirects: readonly RedirectEdge[]): string[][] {
  return RedirectGraph.of(redirects).loops()
}

/**
 * Every redirect whose `toPath` is the `fromPath` of another redirect, with the paths it passes
 * through and where a client finally lands: `A→B, B→C` gives `{ fromPath: A, via: [B], finalPath: C }`.
 * Redirects that lead into a loop are not chains (they never land); {@link findRedirectLoops}
 * reports those. Listed in input order. Linear in the number of redirects; each chain's `via` is
 * walked only when read.
 */
export function findRedirectChains(redirects: readonly RedirectEdge[]): RedirectChain[] {
  const graph = RedirectGraph.of(redirects)
  return Array.from(graph.chains(), ({ fromPath, finalPath }) => ({
    fromPath,
    get via() {
      return graph.via(fromPath)
    },
    finalPath,
  }))
}

/**
 * The updates that point every chained redirect straight at its final destination, so that a
 * client needs one hop instead of several. Redirects that are not chained, and those that lead into
 * a loop, get no update. Linear in the number of redirects.
 */
export function flattenRedirectChains(redirects: readonly RedirectEdge[]): RedirectEdge[] {
  return RedirectGraph.of(redirects).flattening()
}

/**
 * {@link flattenRedirectChains} for redirects with their types: each update carries the type that
 * keeps visitors' answers as they were (see {@link RedirectFlattening}).
 */
export async function flattenTypedRedirectChains(
  redirects: readonly (RedirectEdge & { type: RedirectType })[],
): Promise<RedirectFlattening[]> {
  const graph = new RedirectGraph()
  const temporary = new Set<number>()
  for (const { fromPath, toPath, type } of redirects) {
    const from = graph.paths.intern(fromPath)
    if (graph.addNodes(from, graph.paths.intern(toPath)) && type === 'temporary') temporary.add(from)
  }
  return flatteningYielding(await resolveYielding(graph), (node) => temporary.has(node))
}
