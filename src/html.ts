/**
 * Escaped HTML templates and encoded URLs. `html` is a tagged template whose interpolations are
 * escaped unless they are themselves `html` results (or `url` results, which are safe in an
 * attribute as they are); `url` is one whose interpolations are percent-encoded, so a value can
 * never add a path segment, a query or a fragment to the address it is part of. Markup and
 * addresses are built from trusted literals and escaped data only, and `raw()` is the only way
 * round the escaping. Views are plain TypeScript functions: the compiler checks every value a view
 * uses.
 */

// Module-private: only this file can make a `SafeHtml` or a `SafeUrl`, so escaping cannot be
// skipped by calling a constructor.
const TRUSTED: unique symbol = Symbol('trusted')

/** Markup that is safe to send as it is: built by `html`, or declared trusted with `raw()`. */
export class SafeHtml {
  readonly value: string

  private constructor(value: string, token: typeof TRUSTED) {
    if (token !== TRUSTED) throw new TypeError('SafeHtml is made by html`…` or raw()')
    this.value = value
  }

  /** @internal The one maker, for `html` and `raw` below. */
  static [TRUSTED](value: string): SafeHtml {
    return new SafeHtml(value, TRUSTED)
  }

  toString(): string {
    return this.value
  }
}

/**
 * A same-site address whose every interpolated part was percent-encoded by `url`. It is safe in an
 * `href`, an `action` or a `Location` header as it is.
 */
export class SafeUrl {
  readonly value: string

  private constructor(value: string, token: typeof TRUSTED) {
    if (token !== TRUSTED) throw new TypeError('SafeUrl is made by url`…`')
    this.value = value
  }

  /** @internal The one maker, for `url` below. */
  static [TRUSTED](value: string): SafeUrl {
    return new SafeUrl(value, TRUSTED)
  }

  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] as string)
}

/** Markup from a trusted source, sent as it is: the only way round `html`'s escaping. */
export function raw(markup: string): SafeHtml {
  return SafeHtml[TRUSTED](markup)
}

/** A value a template may hold: markup, addresses, text, numbers, lists of these, or nothing. */
export type Renderable =
  | SafeHtml
  | SafeUrl
  | string
  | number
  | null
  | undefined
  | false
  | readonly Renderable[]

function render(value: Renderable): string {
  if (value instanceof SafeHtml) return value.value
  // Percent-encoded parts hold no `"`, `<` or `'`; `&` may join query parameters and is escaped.
  // Stryker disable next-line ConditionalExpression: String() of a SafeUrl is its value, escaped the same way below
  if (value instanceof SafeUrl) return escapeHtml(value.value)
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): SafeHtml {
  // A template always has one more string than values: the fallbacks only satisfy the type checker.
  // Stryker disable next-line StringLiteral: never used, see above
  let out = strings[0] ?? ''
  values.forEach((value, index) => {
    // Stryker disable next-line StringLiteral: never used, see above
    out += render(value) + (strings[index + 1] ?? '')
  })
  return SafeHtml[TRUSTED](out)
}

/**
 * A path of this site under `prefix` that came from outside (a `next` parameter), as `URL` parses
 * and percent-encodes it, or undefined when it is not one: another host, a dot segment that leaves
 * `prefix`, a backslash.
 */
export function sameSitePath(value: string, prefix: string): SafeUrl | undefined {
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return undefined
  const base = 'http://lectern.invalid'
  let parsed: URL
  try {
    parsed = new URL(value, base)
    // Stryker disable next-line BlockStatement: defence in depth; a path that passed the checks above parses
  } catch {
    return undefined
  }
  // Stryker disable next-line ConditionalExpression: defence in depth; the checks above already keep the host
  if (parsed.origin !== base) return undefined
  if (parsed.pathname !== prefix && !parsed.pathname.startsWith(`${prefix}/`)) return undefined
  return SafeUrl[TRUSTED](parsed.pathname + parsed.search)
}

/** What a `url` template may interpolate: each becomes one percent-encoded part. */
export type UrlPart = string | number | boolean

/**
 * A same-site address: `url\`/admin/submissions/${id}/read\``. Every interpolation is
 * `encodeURIComponent`-ed, so an id such as `../users/x/disable?` stays one path segment. The literal
 * must start with `/` and not `//` (another host), so the result never leaves the site.
 */
export function url(strings: TemplateStringsArray, ...values: UrlPart[]): SafeUrl {
  // Stryker disable next-line StringLiteral: never used, a template always has its first string
  const first = strings[0] ?? ''
  if (!first.startsWith('/') || first.startsWith('//')) {
    throw new TypeError(`url\`…\` builds same-site paths only (got '${first}')`)
  }
  let out = first
  values.forEach((value, index) => {
    // Stryker disable next-line StringLiteral: never used, a template has one more string than values
    out += encodeURIComponent(String(value)) + (strings[index + 1] ?? '')
  })
  return SafeUrl[TRUSTED](out)
}

/**
 * `base` with a query string: each name and value is percent-encoded, and parameters whose value
 * is undefined are left out (a view's defaults stay out of its address, so the plain address and
 * the default view are one bookmark).
 */
export function withQuery(
  base: SafeUrl,
  params: Record<string, UrlPart | undefined>,
  fragment?: string,
): SafeUrl {
  const query = Object.entries(params)
    .filter((entry): entry is [string, UrlPart] => entry[1] !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&')
  const hash = fragment === undefined ? '' : `#${encodeURIComponent(fragment)}`
  return SafeUrl[TRUSTED]((query === '' ? base.value : `${base.value}?${query}`) + hash)
}
