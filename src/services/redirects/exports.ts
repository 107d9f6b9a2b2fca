import { stringify } from 'csv-stringify/sync'
import { redirectPathForEntry } from '../../resources/redirect-path.js'
import { CSV_COLUMNS } from './csv.js'
import type { ResolvedRedirect } from './matcher.js'
import { encodeRedirectPath } from './matcher.js'

/** The formats `lectern redirects export` writes. */
export const REDIRECT_EXPORT_FORMATS = [
  'csv',
  'json',
  'nginx',
  'apache',
  'caddy',
  'netlify',
  'vercel',
  'cloudflare',
] as const

export type RedirectExportFormat = (typeof REDIRECT_EXPORT_FORMATS)[number]

/** Options some formats need. */
export interface RedirectExportOptions {
  /**
   * The site's host name (`www.example.com`). Cloudflare Bulk Redirects match whole URLs, so its
   * source URLs need one; the other formats ignore it.
   */
  host?: string
}

/** What a file of each format is usually called, and its media type (for downloads). */
export const REDIRECT_EXPORT_FILES: Record<RedirectExportFormat, { fileName: string; mediaType: string }> = {
  csv: { fileName: 'redirects.csv', mediaType: 'text/csv; charset=utf-8' },
  json: { fileName: 'redirects.json', mediaType: 'application/json; charset=utf-8' },
  nginx: { fileName: 'redirects.nginx.conf', mediaType: 'text/plain; charset=utf-8' },
  apache: { fileName: 'redirects.apache.conf', mediaType: 'text/plain; charset=utf-8' },
  caddy: { fileName: 'redirects.caddy', mediaType: 'text/plain; charset=utf-8' },
  netlify: { fileName: '_redirects', mediaType: 'text/plain; charset=utf-8' },
  vercel: { fileName: 'vercel.json', mediaType: 'application/json; charset=utf-8' },
  cloudflare: { fileName: 'cloudflare-bulk-redirects.csv', mediaType: 'text/csv; charset=utf-8' },
}

/** Whether `value` names an export format. */
export const isRedirectExportFormat = (value: string): value is RedirectExportFormat =>
  (REDIRECT_EXPORT_FORMATS as readonly string[]).includes(value)

/** A host name as Cloudflare accepts it in a source URL: letters, digits, dots and dashes. */
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/

/** Why these options cannot produce `format`, or `null` when they can (a malformed `host`). */
export function redirectExportProblem(
  format: RedirectExportFormat,
  options: RedirectExportOptions,
): string | null {
  if (format !== 'cloudflare' || options.host === undefined || options.host === '') return null
  if (!HOST_NAME.test(options.host)) return `'${options.host}' is not a host name (e.g. www.example.com)`
  return null
}

/**
 * What `format` lacks without a host name, or `null`: Cloudflare's source URLs are whole URLs, so a
 * file written without one (its sources bare paths) must be given the host before it is uploaded.
 */
export function redirectExportHostWarning(
  format: RedirectExportFormat,
  options: RedirectExportOptions,
): string | null {
  if (format !== 'cloudflare' || (options.host !== undefined && options.host !== '')) return null
  return "the cloudflare format needs the site's host name (e.g. www.example.com), because Bulk Redirects match whole URLs"
}

/**
 * Writes resolved redirects (chains already flattened by the matcher: each rule is the matcher's
 * answer for its `fromPath`) in `format`, as text chunks, one pass over `rules`, so that 100,000
 * redirects stream in linear time (nginx alone holds and sorts them first, see its writer). Every
 * format gives the answers of the matching algorithm when served; what each server needs for that is said beside
 * its writer. Paths reach a file only encoded or escaped for that file, so no path can add a
 * directive; a `fromPath` holding a control character (which the path rules refuse, and which could end a
 * line) is left out. Throws when {@link redirectExportProblem} says so.
 */
export function* exportRedirects(
  format: RedirectExportFormat,
  allRules: Iterable<ResolvedRedirect>,
  options: RedirectExportOptions = {},
): Generator<string> {
  const problem = redirectExportProblem(format, options)
  if (problem !== null) throw new Error(problem)
  const rules = withoutControlCharacters(allRules)
  switch (format) {
    case 'csv':
      yield* csv(rules)
      return
    case 'json':
      yield* json(rules)
      return
    case 'nginx':
      yield* nginx(rules)
      return
    case 'apache':
      yield* apache(rules)
      return
    case 'caddy':
      yield* caddy(rules)
      return
    case 'netlify':
      yield* netlify(rules)
      return
    case 'vercel':
      yield* vercel(rules)
      return
    case 'cloudflare':
      // Without a host the sources are bare paths (see `redirectExportHostWarning`).
      yield* cloudflare(rules, options.host ?? '')
      return
  }
}

/** Whether `text` holds U+0000–U+001F or U+007F, characters that could end a line of a config file. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code <= 0x1f || code === 0x7f) return true
  }
  return false
}

function* withoutControlCharacters(rules: Iterable<ResolvedRedirect>): Generator<ResolvedRedirect> {
  for (const rule of rules) if (!hasControlCharacter(rule.fromPath)) yield rule
}

const typeOf = (rule: ResolvedRedirect) => (rule.status === 301 ? 'permanent' : 'temporary')

/**
 * The dashboard's CSV columns (`fromPath,toPath,type,isActive`), paths as a person types them (a
 * literal `%` as `%25`), so the file imports back as is.
 */
function* csv(rules: Iterable<ResolvedRedirect>): Generator<string> {
  yield stringify([[...CSV_COLUMNS]])
  yield* csvRows(rules, (rule) => [
    redirectPathForEntry(rule.fromPath),
    redirectPathForEntry(rule.toPath),
    typeOf(rule),
    'true',
  ])
}

/** Rows through csv-stringify a thousand at a time: one call per row costs more than the quoting. */
function* csvRows(rules: Iterable<ResolvedRedirect>, row: (rule: ResolvedRedirect) => (string | number)[]) {
  let batch: (string | number)[][] = []
  for (const rule of rules) {
    batch.push(row(rule))
    if (batch.length === 1000) {
      yield stringify(batch)
      batch = []
    }
  }
  if (batch.length > 0) yield stringify(batch)
}

/** The flattened list: each redirect's path, final destination, type, status and Location path. */
function* json(rules: Iterable<ResolvedRedirect>): Generator<string> {
  yield '['
  let first = true
  for (const rule of rules) {
    const { fromPath, toPath, status, location } = rule
    yield `${first ? '\n' : ',\n'}  ${JSON.stringify({ fromPath, toPath, type: typeOf(rule), status, location })}`
    first = false
  }
  yield first ? ']\n' : '\n]\n'
}

const GENERATED = '# Written by `lectern redirects export`; changes are lost on the next export.\n'

/**
 * nginx, inside `server { }`: one exact-match `location =` per redirect. nginx compares a location
 * with the request path percent-decoded once (an invalid encoding is already a 400), case-sensitively,
 * as the matching algorithm does; exact locations are looked up in a tree, so 100,000 of them stay fast.
 * `absolute_redirect off` is set inside each block so that `Location` stays a path, as the matching algorithm says,
 * without changing the server's other redirects. `$is_args$args` carries the raw query (nothing for
 * a bare `?`). The path is a quoted string (`"` and `\` escaped); the Location holds only unreserved
 * characters, `/` and `%XX`, none of which nginx interprets. nginx merges repeated slashes before
 * matching (`merge_slashes`), so a stored path holding `//` never matches there. The rules are
 * written in nginx's own sort order (see {@link nginxOrderKey}), so this writer holds them all.
 */
function* nginx(rules: Iterable<ResolvedRedirect>): Generator<string> {
  yield GENERATED
  const sorted = [...rules].map((rule) => ({ rule, key: nginxOrderKey(rule.fromPath) }))
  sorted.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  for (const { rule } of sorted)
    yield `location = ${nginxString(rule.fromPath)} { absolute_redirect off; return ${rule.status} "${rule.location}$is_args$args"; }\n`
}

/**
 * nginx up to 1.25 sorts a server's locations with an insertion sort when it reads its
 * configuration: 100,000 locations in any other order take minutes to load, in nginx's own order
 * (`ngx_filename_cmp`: UTF-8 bytes, `/` lowest, a prefix before its extensions) a blink. This key
 * gives that order under plain string comparison: `/` becomes 1, every other byte its value + 1.
 */
function nginxOrderKey(path: string): string {
  let key = ''
  for (const byte of UTF8.encode(path)) key += String.fromCharCode(byte === 0x2f ? 1 : byte + 1)
  return key
}

const UTF8 = new TextEncoder()

const nginxString = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`

/**
 * Apache, inside `<VirtualHost>`: `Redirect` matches prefixes and `RedirectMatch` re-escapes `%`,
 * so each redirect is a `RewriteRule` with an anchored pattern whose every non-alphanumeric ASCII
 * character is a hex escape (so it is literal). mod_rewrite matches the decoded path, case-sensitively.
 * `NE` keeps the already-encoded Location as written (`\%` stops `%2` reading as a back-reference).
 * The substitution ends in `?%{QUERY_STRING}`: the raw query when there is one, and a bare `?`,
 * which mod_rewrite drops, when there is none or it is empty (appending by default would keep a
 * bare `?`). `L` stops at the first match. mod_rewrite always makes `Location` absolute
 * (`http://host/new`, from the request's Host): the same target, and no setting turns that off.
 */
function* apache(rules: Iterable<ResolvedRedirect>): Generator<string> {
  yield GENERATED
  yield 'RewriteEngine On\n'
  for (const rule of rules)
    yield `RewriteRule "^${apacheRegex(rule.fromPath)}$" "${rule.location.replace(/%/g, '\\%')}?%{QUERY_STRING}" [R=${rule.status},NE,L]\n`
}

/**
 * A literal for PCRE that mod_rewrite's argument reader leaves alone: ASCII other than letters,
 * digits and `/` is written as `\xHH`, so no quote, space or backslash-escape reaches the config
 * parser (its `\` only escapes spaces); UTF-8 stays as bytes, as mod_rewrite sees the decoded path.
 */
const apacheRegex = (path: string) =>
  path.replace(/[^A-Za-z0-9/\u0080-\uFFFF]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)

/**
 * Caddy, inside a site block (`import`): one `map` from the decoded path (`{http.request.uri.path}`,
 * compared exactly and case-sensitively — Caddy's `path` matcher is case-insensitive, so it is not
 * used) to the Location and status, then a `redir` adding `?` and the raw query when there is one. Caddy replaces `{$NAME}` with an environment variable before
 * reading a Caddyfile, and a quoted map key cannot escape that, so a path holding `{$` gets its own
 * rule, an expression whose string literal spells every character as a `\u` escape.
 */
function* caddy(rules: Iterable<ResolvedRedirect>): Generator<string> {
  yield GENERATED
  const special: ResolvedRedirect[] = []
  yield 'map {http.request.uri.path} {lectern_redirect_location} {lectern_redirect_status} {\n'
  for (const rule of rules) {
    if (rule.fromPath.includes('{$')) special.push(rule)
    else yield `\t${caddyString(rule.fromPath)} "${rule.location}" ${rule.status}\n`
  }
  // Without a default an unmatched path leaves the placeholders unset, and they would not compare equal to "".
  yield '\tdefault "" ""\n'
  yield '}\n'
  // A redirect with a query and one without: Caddy 2.6 has no placeholder for "?query or nothing".
  yield '@lectern_redirect_query expression `{lectern_redirect_location} != "" && {http.request.uri.query} != ""`\n'
  yield 'redir @lectern_redirect_query {lectern_redirect_location}?{http.request.uri.query} {lectern_redirect_status}\n'
  yield '@lectern_redirect expression `{lectern_redirect_location} != "" && {http.request.uri.query} == ""`\n'
  yield 'redir @lectern_redirect {lectern_redirect_location} {lectern_redirect_status}\n'
  let index = 0
  for (const rule of special) {
    index++
    const path = `{http.request.uri.path} == "${celEscapes(rule.fromPath)}"`
    yield `@lectern_redirect_${index}_query expression \`${path} && {http.request.uri.query} != ""\`\n`
    yield `redir @lectern_redirect_${index}_query ${rule.location}?{http.request.uri.query} ${rule.status}\n`
    yield `@lectern_redirect_${index} expression \`${path} && {http.request.uri.query} == ""\`\n`
    yield `redir @lectern_redirect_${index} ${rule.location} ${rule.status}\n`
  }
}

const caddyString = (text: string) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`

/** Every character as a CEL escape (`\u0041`, `\U0001F600`): nothing left for Caddy to read. */
function celEscapes(text: string): string {
  let out = ''
  for (const char of text) {
    const code = char.codePointAt(0) as number
    out +=
      code > 0xffff ? `\\U${code.toString(16).padStart(8, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  }
  return out
}

/**
 * Netlify `_redirects`: `from to status!`, both paths percent-encoded (fields are separated by
 * spaces, and the encoding leaves no space, `:placeholder` or `*` splat). `!` forces the redirect
 * even when a file exists at the old path, as the matcher does. Netlify passes the query string on.
 */
function* netlify(rules: Iterable<ResolvedRedirect>): Generator<string> {
  yield GENERATED
  for (const rule of rules) yield `${encodeRedirectPath(rule.fromPath)} ${rule.location} ${rule.status}!\n`
}

/**
 * `vercel.json`'s `redirects`: `source` percent-encoded (so no path-to-regexp syntax such as
 * `:name`, `(`, `*` or `?` survives), `statusCode` 301/302 (`permanent` would mean 308/307).
 * Vercel passes the query string on.
 */
function* vercel(rules: Iterable<ResolvedRedirect>): Generator<string> {
  yield '{\n  "redirects": ['
  let first = true
  for (const rule of rules) {
    const entry = {
      source: encodeRedirectPath(rule.fromPath),
      destination: rule.location,
      statusCode: rule.status,
    }
    yield `${first ? '\n' : ',\n'}    ${JSON.stringify(entry)}`
    first = false
  }
  yield first ? ']\n}\n' : '\n  ]\n}\n'
}

/**
 * Cloudflare Bulk Redirects CSV (no header row): source URL, target URL, status code, preserve
 * query string, include subdomains, subpath matching, preserve path suffix. The source is
 * `host/path` (no scheme: both http and https), the target a path (Cloudflare keeps the host),
 * subpaths off so only the exact path matches, the query string preserved.
 */
function* cloudflare(rules: Iterable<ResolvedRedirect>, host: string): Generator<string> {
  yield* csvRows(rules, (rule) => [
    `${host}${encodeRedirectPath(rule.fromPath)}`,
    rule.location,
    rule.status,
    'TRUE',
    'FALSE',
    'FALSE',
    'FALSE',
  ])
}
