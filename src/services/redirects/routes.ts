import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Executor } from '../../db/executor.js'
import { activeRedirectsTo, WALK_STEPS, walkRedirectsFrom } from '../../db/repositories/redirects.js'
import type { RedirectValue } from '../../resources/redirect.js'
import { describeRedirectRoute, ROUTE_HEAD } from './rules.js'

/** Chains named in the message after one change; the dashboard lists this many on its page. */
const LISTED_CHANGE_CHAINS = 5
/** Redirects leading to a changed one that are looked at to name the chains it joins. */
const MAX_ANCESTORS = 50

/** A route followed from a redirect: its first paths, how many paths in all, and the last. */
export interface Route {
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

/** The problem a loop is, said beside the field that closes it. */
export const loopSentence = (loop: Route) =>
  `This would make a redirect loop (${describeRedirectRoute(loop.head, loop.length, loop.last)}): clients would be sent round in circles. Point it at a path that does not redirect back.`

/**
 * Walks from `value.toPath` along the redirects as they would be with `value` saved (the redirect
 * `excludeId` replaced by it), by indexed lookups on `from_path`, a few thousand per statement.
 * Returns the loop `value` would close, if any, and the route of active redirects it starts.
 */
export async function walkFrom(
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
    const rows = await walkRedirectsFrom(trx, start, excludeId, value.fromPath)
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
export async function chainsThrough(
  trx: Executor,
  forward: Route,
): Promise<{ chains: string[]; more: boolean }> {
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
      const leading = await activeRedirectsTo(trx, path, MAX_ANCESTORS + 1)
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
