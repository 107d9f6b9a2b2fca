import { FIELD_LIMITS } from '../limits.js'

/**
 * The rules for a redirect's paths, and the one normalisation every way a redirect enters Lectern
 * goes through (docs/redirects.md): part of what a redirect is, so the resource's reader and the
 * redirect services share it.
 */

/** The longest path a redirect may hold; longer URLs are rejected by browsers and proxies alike. */
export const MAX_REDIRECT_PATH_LENGTH = FIELD_LIMITS.path

/** What {@link normaliseRedirectPath} made of a path: the path to store, or why there is none. */
export type NormalisedRedirectPath = { path: string; problem: null } | { path: null; problem: string }

const ENCODED_FORBIDDEN = /%(2f|5c|[01][0-9a-f]|7f)/i
const DOT_SEGMENT = /\/\.\.?(?=\/|$)/

/** Why `path`, as given or decoded, breaks a rule for redirect paths (no query, fragment, backslash, dot segment…); `null` when it breaks none. */
function shapeProblem(path: string): string | null {
  if (!path.startsWith('/')) return "must start with '/'"
  if (path.startsWith('//')) return "must not start with '//' (that would redirect to another host)"
  if (path.length > MAX_REDIRECT_PATH_LENGTH)
    return `must be at most ${MAX_REDIRECT_PATH_LENGTH} characters long (it has ${path.length})`
  // Stryker disable next-line EqualityOperator: one step past the end reads NaN, which is no control character
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i)
    if (code <= 0x1f || code === 0x7f)
      return `must not contain control characters (found U+${code.toString(16).toUpperCase().padStart(4, '0')})`
  }
  if (path.includes('?')) return "must not contain a query string ('?'): the incoming one is carried over"
  if (path.includes('#')) return "must not contain a fragment ('#')"
  if (path.includes('\\')) return 'must not contain a backslash (browsers read it as a slash)'
  const encoded = ENCODED_FORBIDDEN.exec(path)?.[0]
  if (encoded !== undefined) {
    const byte = encoded.slice(1).toUpperCase()
    const what = byte === '2F' ? 'slash' : byte === '5C' ? 'backslash' : 'control character'
    return `must not contain an encoded ${what} (found '${encoded}')`
  }
  if (DOT_SEGMENT.test(path))
    return "must not contain a dot segment ('/./' or '/../', or end in '/.' or '/..')"
  return null
}

/**
 * The one normalisation of a redirect path, used by every way a redirect enters Lectern (dashboard
 * form, CSV import, `lectern import`, JSON import): checks the rules for redirect paths on the path as given,
 * percent-decodes it (UTF-8: `/%C3%BCber` is stored as `/über`), and checks the
 * decoded path again, so that an encoded `?`, `#`, dot or double encoding cannot slip through.
 *
 * A valid path starts with `/` but not `//` (a protocol-relative URL: an open redirect to another
 * host), holds no `?` (the incoming query string is carried over, so a path never has its own), no
 * `#`, no backslash (browsers read `/\evil.com` as `//evil.com`), no control character
 * (U+0000–U+001F, U+007F: header injection), no encoded slash, backslash or control character, no
 * dot segment, and is at most {@link MAX_REDIRECT_PATH_LENGTH} long. A literal `%` is written `%25`.
 * The problem reads as a predicate, e.g. `must not contain a fragment ('#')`.
 */
export function normaliseRedirectPath(given: string): NormalisedRedirectPath {
  const problem = shapeProblem(given)
  if (problem !== null) return { path: null, problem }
  let decoded: string
  try {
    decoded = decodeURIComponent(given)
  } catch {
    return {
      path: null,
      problem:
        "has an invalid percent-encoding: '%' must start a UTF-8 byte such as '%C3%BC' (write a literal '%' as '%25')",
    }
  }
  // Stryker disable next-line ConditionalExpression: a fast path; the checks below give the same answer for it
  if (decoded === given) return { path: given, problem: null }
  const decodedProblem = shapeProblem(decoded)
  if (decodedProblem !== null)
    return { path: null, problem: `decodes to '${decoded}', which ${decodedProblem}` }
  return { path: decoded, problem: null }
}

/** Why `path` cannot be a redirect's `fromPath` or `toPath`, or `null` when it can (see {@link normaliseRedirectPath}). */
export function redirectPathProblem(path: string): string | null {
  return normaliseRedirectPath(path).problem
}

/**
 * A stored (decoded) path as a person would type it back in, so that a form or a CSV export read
 * again by {@link normaliseRedirectPath} gives the same path: only `%` needs encoding (`/50%-off` is
 * typed `/50%25-off`); other characters decode to themselves.
 */
export function redirectPathForEntry(stored: string): string {
  return stored.replaceAll('%', '%25')
}
