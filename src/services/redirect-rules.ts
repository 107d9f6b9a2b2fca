/**
 * The redirect rules of SPEC §2 as pure functions over plain `{ fromPath, toPath }` pairs, so that
 * the importer, the dashboard and the CLI all judge redirects the same way, without I/O.
 */

/** The two paths of a redirect; anything else a caller's objects carry is ignored. */
export interface RedirectEdge {
  fromPath: string
  toPath: string
}

/** A redirect whose destination is itself redirected: `fromPath` → `via…` → `finalPath`. */
export interface RedirectChain {
  fromPath: string
  /** The intermediate paths, in the order a client would be sent through them. */
  via: string[]
  finalPath: string
}

/** The longest path a redirect may hold; longer URLs are rejected by browsers and proxies alike. */
export const MAX_REDIRECT_PATH_LENGTH = 2048

/**
 * Why `path` cannot be a redirect's `fromPath` or `toPath`, or `null` when it can.
 *
 * A valid path starts with `/` but not `//` (a protocol-relative URL: an open redirect to another
 * host), holds no `?` (the incoming query string is carried over, so a path never has its own), no
 * `#`, no backslash (browsers read `/\evil.com` as `//evil.com`), no control character
 * (U+0000–U+001F, U+007F: header injection), and is at most {@link MAX_REDIRECT_PATH_LENGTH} long.
 * The reason reads as a predicate, e.g. `must not contain a fragment ('#')`.
 */
export function redirectPathProblem(path: string): string | null {
  if (!path.startsWith('/')) return "must start with '/'"
  if (path.startsWith('//')) return "must not start with '//' (that would redirect to another host)"
  if (path.length > MAX_REDIRECT_PATH_LENGTH)
    return `must be at most ${MAX_REDIRECT_PATH_LENGTH} characters long (it has ${path.length})`
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i)
    if (code <= 0x1f || code === 0x7f)
      return `must not contain control characters (found U+${code.toString(16).toUpperCase().padStart(4, '0')})`
  }
  if (path.includes('?')) return "must not contain a query string ('?'): the incoming one is carried over"
  if (path.includes('#')) return "must not contain a fragment ('#')"
  if (path.includes('\\')) return 'must not contain a backslash (browsers read it as a slash)'
  return null
}

/**
 * `fromPath` → `toPath`. `fromPath` is unique among valid redirects; should the input repeat one,
 * the first redirect for it wins, so that every function here still terminates.
 */
function destinations(redirects: readonly RedirectEdge[]): Map<string, string> {
  const next = new Map<string, string>()
  for (const { fromPath, toPath } of redirects) if (!next.has(fromPath)) next.set(fromPath, toPath)
  return next
}

/**
 * Every redirect loop, each as the paths a client would visit, ending where it started:
 * `/a → /b → /a` is `['/a', '/b', '/a']` and a redirect to itself is `['/a', '/a']`. Each loop is
 * listed once, starting at the first of its paths reached when walking the redirects in input order.
 * Runs in linear time: each path is walked at most once.
 */
export function findRedirectLoops(redirects: readonly RedirectEdge[]): string[][] {
  const next = destinations(redirects)
  // 'walking' marks the paths of the current walk; meeting one again closes a loop.
  const state = new Map<string, 'walking' | 'done'>()
  const loops: string[][] = []
  for (const { fromPath } of redirects) {
    if (state.has(fromPath)) continue
    const walk: string[] = []
    let current: string | undefined = fromPath
    while (current !== undefined && !state.has(current)) {
      state.set(current, 'walking')
      walk.push(current)
      current = next.get(current)
    }
    if (current !== undefined && state.get(current) === 'walking') {
      loops.push([...walk.slice(walk.indexOf(current)), current])
    }
    for (const path of walk) state.set(path, 'done')
  }
  return loops
}

/**
 * Every redirect whose `toPath` is the `fromPath` of another redirect, with the paths it passes
 * through and where a client finally lands: `A→B, B→C` gives `{ fromPath: A, via: [B], finalPath: C }`.
 * Redirects that lead into a loop are not chains (they never land); {@link findRedirectLoops}
 * reports those. Listed in input order.
 */
export function findRedirectChains(redirects: readonly RedirectEdge[]): RedirectChain[] {
  const next = destinations(redirects)
  const chains: RedirectChain[] = []
  for (const [fromPath, toPath] of next) {
    if (!next.has(toPath) || toPath === fromPath) continue
    const via: string[] = []
    const seen = new Set<string>([fromPath])
    let current = toPath
    let landed = true
    for (let hop = next.get(current); hop !== undefined; hop = next.get(current)) {
      if (seen.has(current)) {
        landed = false
        break
      }
      seen.add(current)
      via.push(current)
      current = hop
    }
    if (landed) chains.push({ fromPath, via, finalPath: current })
  }
  return chains
}

/**
 * The updates that point every chained redirect straight at its final destination, so that a
 * client needs one hop instead of several. Redirects that are not chained, and those that lead into
 * a loop, get no update.
 */
export function flattenRedirectChains(redirects: readonly RedirectEdge[]): RedirectEdge[] {
  return findRedirectChains(redirects).map(({ fromPath, finalPath }) => ({ fromPath, toPath: finalPath }))
}
