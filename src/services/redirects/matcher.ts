import { encodeUriComponentSafely } from '../../text.js'

/**
 * The one redirect-matching algorithm (docs/redirects.md, "Applying redirects"), as a pure function of a set of redirects: no I/O,
 * no clock. The API server, the CLI (`lectern redirects match`) and every web-server export
 * (`exports.ts`) answer from a matcher built here, and `spec/redirect-cases.json` holds
 * the cases every implementation (this one, the exports, the three clients) must agree on.
 */

/** The fields of a redirect the algorithm reads; API redirect objects fit as they are. */
export interface RedirectRule {
  fromPath: string
  toPath: string
  /** `permanent` answers 301; anything else is treated as `temporary` (302). */
  type: string
  /** Only `false` switches a redirect off, so lists of active rules may leave the field out. */
  isActive?: boolean
}

/** What a request that matches gets: the status and the `Location` header value (a path, never absolute). */
export interface RedirectAnswer {
  status: 301 | 302
  location: string
}

/** One active redirect with its chain followed to the end: what a web-server export writes as one rule. */
export interface ResolvedRedirect {
  /** The stored (decoded) path that matches. */
  fromPath: string
  /** Where the chain ends, decoded as stored. */
  toPath: string
  /** 301 only when every link of the chain is permanent. */
  status: 301 | 302
  /** `toPath` percent-encoded by {@link encodeRedirectPath}: the `Location` without a query. */
  location: string
}

/** A built matcher; building is linear in the number of redirects, matching is one hash lookup. */
export interface RedirectMatcher {
  /**
   * The answer for a request target (`/path`, `/path?query`, maybe `#fragment`), or `null` when no
   * active redirect matches and the request should be served as usual.
   */
  match(target: string): RedirectAnswer | null
  /** The resolved redirect for a decoded path, as stored; `undefined` when none applies. */
  resolve(decodedPath: string): ResolvedRedirect | undefined
  /** Every active redirect that applies, resolved, in the order the rules were given. */
  rules(): IterableIterator<ResolvedRedirect>
  /** How many redirects apply. */
  readonly size: number
}

const UNRESERVED_OR_SLASH = /^[A-Za-z0-9\-._~/]*$/

/**
 * Percent-encodes a stored (decoded) path for a `Location` header: every UTF-8 byte other than an
 * RFC 3986 unreserved character (`A–Z a–z 0–9 - . _ ~`) and `/` becomes `%XX` (uppercase hex), so
 * `/neu-ü` is `/neu-%C3%BC` and a literal `%` is `%25`.
 *
 * Why more than a URL strictly needs (`:`, `@`, `$`, `;`, `*`, `'`… are encoded too): the same
 * string is written into nginx, Apache, Caddy, Netlify, Vercel and Cloudflare files, where those
 * characters are variables, placeholders, quotes or directive separators. Encoded, a destination can
 * never be read as configuration, and since `:` is always encoded a Location can never carry a
 * scheme. It is one line in every client language: Python `quote(path, safe='/')`, PHP
 * `str_replace('%2F', '/', rawurlencode($path))`. Lone surrogates (not UTF-8) become U+FFFD.
 */
export function encodeRedirectPath(path: string): string {
  // Stryker disable next-line ConditionalExpression: a fast path; encoding such a path gives it back unchanged
  if (UNRESERVED_OR_SLASH.test(path)) return path
  return encodeUriComponentSafely(path)
    .replace(/%2F/g, '/')
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/**
 * Percent-decodes a request path once (UTF-8), or `null` when the encoding is invalid: a `%` not
 * followed by two hex digits, or bytes that are not well-formed UTF-8 (overlong forms and encoded
 * surrogates included). `%2F` decodes to `/` like any other byte (the algorithm decodes once, then compares).
 */
export function decodeRequestPath(path: string): string | null {
  // Stryker disable next-line ConditionalExpression,StringLiteral: a fast path; a path without '%' decodes to itself
  if (!path.includes('%')) return path
  try {
    // decodeURIComponent is exactly "decode once, strict UTF-8": it throws on malformed input.
    return decodeURIComponent(path)
  } catch {
    return null
  }
}

const WALKING = Symbol('walking')

/** Where a walk along the chain has got to: resolved, or known to lead nowhere (a loop, a bad path). */
type Resolution = ResolvedRedirect | null

/**
 * Builds a matcher from redirect items. Inactive items are ignored; should two active
 * items share a `fromPath`, the first wins (the rules refuse duplicates on write). Chains are
 * followed to their end once, with memoization, so building takes linear time. A redirect that leads
 * into a loop (refused on write, but data may come from anywhere) or to a destination that is not a
 * same-site path (`/…` but not `//…`) applies nowhere: it never hangs and never redirects off-site.
 */
export function createRedirectMatcher(items: Iterable<RedirectRule>): RedirectMatcher {
  const next = new Map<string, RedirectRule>()
  for (const item of items) {
    if (item.isActive === false || next.has(item.fromPath)) continue
    next.set(item.fromPath, item)
  }

  // One map holds both the answers and the paths of the walk in progress (a loop meets WALKING).
  const resolved = new Map<string, Resolution | typeof WALKING>()
  for (const start of next.keys()) {
    // Stryker disable next-line ConditionalExpression: walking from a resolved path again ends at once, as it
    if (resolved.has(start)) continue
    // Walk forward until a path already resolved, a path that does not redirect, or a loop.
    const walk: string[] = []
    let current = start
    let tail: Resolution | 'end' = 'end'
    for (;;) {
      const known = resolved.get(current)
      if (known === WALKING) {
        tail = null
        break
      }
      // Stryker disable next-line ConditionalExpression,BlockStatement: walking on through resolved paths only costs time, and ends where they do
      if (known !== undefined) {
        tail = known
        break
      }
      const rule = next.get(current)
      if (rule === undefined) break
      resolved.set(current, WALKING)
      walk.push(current)
      current = rule.toPath
    }
    // Unwind: each link's answer is its successor's, downgraded to 302 by a temporary link.
    for (let i = walk.length - 1; i >= 0; i--) {
      const fromPath = walk[i] as string
      const rule = next.get(fromPath) as RedirectRule
      const permanent = rule.type === 'permanent'
      let answer: Resolution
      if (tail === null) answer = null
      else if (tail === 'end') {
        answer = isSameSitePath(rule.toPath)
          ? {
              fromPath,
              toPath: rule.toPath,
              status: permanent ? 301 : 302,
              location: encodeRedirectPath(rule.toPath),
            }
          : null
      } else {
        answer = {
          fromPath,
          toPath: tail.toPath,
          status: permanent && tail.status === 301 ? 301 : 302,
          location: tail.location,
        }
      }
      resolved.set(fromPath, answer)
      tail = answer
    }
  }

  let size = 0
  for (const answer of resolved.values()) if (answer !== null) size++

  // After building, no path is left WALKING: every walk was unwound.
  const lookup = resolved as Map<string, Resolution>
  const resolve = (decodedPath: string): ResolvedRedirect | undefined => lookup.get(decodedPath) ?? undefined

  return {
    size,
    resolve,
    *rules() {
      for (const fromPath of next.keys()) {
        const answer = lookup.get(fromPath)
        if (answer) yield answer
      }
    },
    match(target: string): RedirectAnswer | null {
      const hash = target.indexOf('#')
      const withoutFragment = hash === -1 ? target : target.slice(0, hash)
      const mark = withoutFragment.indexOf('?')
      const rawPath = mark === -1 ? withoutFragment : withoutFragment.slice(0, mark)
      const query = mark === -1 ? '' : withoutFragment.slice(mark + 1)
      const path = decodeRequestPath(rawPath)
      // Stryker disable next-line ConditionalExpression: looking up null finds nothing either
      if (path === null) return null
      const answer = lookup.get(path)
      if (!answer) return null
      // An empty query (a bare `?`) is no query: no runtime can tell the two apart (spec/redirect-cases.json).
      return {
        status: answer.status,
        location: query === '' ? answer.location : `${answer.location}?${query}`,
      }
    },
  }
}

/** A destination a Location may name: a path on this site, never `//host` (protocol-relative). */
function isSameSitePath(path: string): boolean {
  return path.startsWith('/') && !path.startsWith('//')
}
