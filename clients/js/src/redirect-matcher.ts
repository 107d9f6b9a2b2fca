/**
 * Lectern's redirect-matching algorithm, the same one the server, the CLI, the exported
 * web-server configurations and the Python and PHP clients run, checked against the same table of
 * cases (`spec/redirect-cases.json`). Pure: no network, no clock.
 */

/** The fields of a redirect the matcher reads: the API's `Redirect` objects fit as they are. */
export interface RedirectRule {
  /** The exact (percent-decoded) path that is redirected. */
  fromPath: string
  /** Where it leads, percent-decoded. */
  toPath: string
  /** `permanent` answers 301; anything else is treated as `temporary` (302). */
  type: string
  /** Only `false` switches a redirect off, so lists of active redirects may leave it out. */
  isActive?: boolean
}

/** What a matching request gets: the status and the `Location` header value (a path, never absolute). */
export interface RedirectMatch {
  status: 301 | 302
  location: string
}

/** Anything that answers a request target with a redirect or `null`: a matcher, or a loader keeping one fresh. */
export interface RedirectSource {
  match(target: string): RedirectMatch | null
}

/** A matcher built from a fixed list of redirects. Building is linear; matching is one map lookup. */
export interface RedirectMatcher extends RedirectSource {
  /**
   * The answer for a request target (`/path`, `/path?query`, maybe with a `#fragment`), or `null`
   * when no active redirect matches and the request should be served as usual.
   */
  match(target: string): RedirectMatch | null
  /** How many paths redirect (active redirects whose chain ends on a path of this site). */
  readonly size: number
}

const UNRESERVED_OR_SLASH = /^[A-Za-z0-9\-._~/]*$/

/**
 * Percent-encodes a stored path for a `Location` header, as the server does: every UTF-8 byte but
 * RFC 3986's unreserved characters and `/` becomes `%XX` (`/neu-ü` → `/neu-%C3%BC`, `%` → `%25`).
 * Encoding `:` too means a Location can never carry a scheme.
 */
export function encodeRedirectPath(path: string): string {
  if (UNRESERVED_OR_SLASH.test(path)) return path
  let encoded: string
  try {
    encoded = encodeURIComponent(path)
  } catch {
    // A lone surrogate is not UTF-8: it becomes U+FFFD, as everywhere else.
    encoded = encodeURIComponent(withoutLoneSurrogates(path))
  }
  return encoded
    .replace(/%2F/g, '/')
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/**
 * `text` with each lone surrogate replaced by U+FFFD (`String.prototype.toWellFormed`, which not
 * every supported runtime has; a look-behind regular expression would not even parse in some).
 */
function withoutLoneSurrogates(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = text.charCodeAt(i + 1)
      if (low >= 0xdc00 && low <= 0xdfff) {
        out += text.slice(i, i + 2)
        i++
      } else out += '\uFFFD'
    } else out += code >= 0xdc00 && code <= 0xdfff ? '\uFFFD' : text[i]
  }
  return out
}

/**
 * A request path percent-decoded once (UTF-8), or `null` when its encoding is invalid: a `%`
 * without two hex digits after it, or bytes that are not well-formed UTF-8.
 */
export function decodeRequestPath(path: string): string | null {
  if (!path.includes('%')) return path
  try {
    // decodeURIComponent is exactly "decode once, strict UTF-8": it throws on anything malformed.
    return decodeURIComponent(path)
  } catch {
    return null
  }
}

/** A resolved path: where its chain ends, or `null` when it leads nowhere (a loop, an off-site path). */
type Resolution = RedirectMatch | null

/**
 * Builds a matcher from redirect items, with no network. Inactive items are ignored;
 * should two active items share a `fromPath`, the first wins. Each chain (A→B→C) is followed to its
 * end once, with memoization, so A answers C in one hop: 301 only if every link is permanent, else
 * 302. A redirect that runs into a loop, or whose destination is not a path of this site (`/…` but
 * never `//…`), applies nowhere: matching never hangs and never sends a visitor to another host.
 *
 * ```ts
 * const matcher = createRedirectMatcher((await lectern.redirects.list({ active: true })).data)
 * matcher.match('/old?x=1') // { status: 301, location: '/new?x=1' }
 * ```
 */
export function createRedirectMatcher(redirects: Iterable<RedirectRule>): RedirectMatcher {
  const next = new Map<string, RedirectRule>()
  for (const redirect of redirects) {
    if (redirect.isActive === false || next.has(redirect.fromPath)) continue
    next.set(redirect.fromPath, redirect)
  }

  const resolved = new Map<string, Resolution>()
  const onWalk = new Set<string>()
  for (const start of next.keys()) {
    if (resolved.has(start)) continue
    // Walk forward to a path already resolved, a path that does not redirect, or a loop; then
    // unwind, so every path on the walk is resolved once.
    const walk: string[] = []
    let current = start
    let tail: Resolution | 'end' = 'end'
    for (;;) {
      const known = resolved.get(current)
      if (known !== undefined) {
        tail = known
        break
      }
      const rule = next.get(current)
      if (rule === undefined) break
      if (onWalk.has(current)) {
        tail = null
        break
      }
      onWalk.add(current)
      walk.push(current)
      current = rule.toPath
    }
    for (let i = walk.length - 1; i >= 0; i--) {
      const fromPath = walk[i] as string
      const rule = next.get(fromPath) as RedirectRule
      const permanent = rule.type === 'permanent'
      let answer: Resolution
      if (tail === null) answer = null
      else if (tail === 'end')
        answer = isSameSitePath(rule.toPath)
          ? { status: permanent ? 301 : 302, location: encodeRedirectPath(rule.toPath) }
          : null
      else answer = { status: permanent && tail.status === 301 ? 301 : 302, location: tail.location }
      resolved.set(fromPath, answer)
      onWalk.delete(fromPath)
      tail = answer
    }
  }

  let size = 0
  for (const answer of resolved.values()) if (answer !== null) size++

  return {
    size,
    match(target: string): RedirectMatch | null {
      const hash = target.indexOf('#')
      const withoutFragment = hash === -1 ? target : target.slice(0, hash)
      const mark = withoutFragment.indexOf('?')
      const rawPath = mark === -1 ? withoutFragment : withoutFragment.slice(0, mark)
      const query = mark === -1 ? '' : withoutFragment.slice(mark + 1)
      const path = decodeRequestPath(rawPath)
      if (path === null) return null
      const answer = resolved.get(path)
      if (!answer) return null
      // A bare `?` is no query: no web server can tell the two apart, so no runtime does.
      return {
        status: answer.status,
        location: query === '' ? answer.location : `${answer.location}?${query}`,
      }
    },
  }
}

/** A destination a Location may name: a path of this site, never `//host` (protocol-relative). */
function isSameSitePath(path: string): boolean {
  return path.startsWith('/') && !path.startsWith('//')
}
