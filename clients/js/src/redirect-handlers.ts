import type { RedirectMatch, RedirectSource } from './redirect-matcher.js'

/** The parts of a Node `IncomingMessage` (or an Express/Connect request) the middleware reads. */
export interface NodeRequestLike {
  /** The request target as received, e.g. `/old?x=1`. */
  url?: string
  /** Express's `req.url` before a mount path was cut off it: preferred when present. */
  originalUrl?: string
}

/** The parts of a Node `ServerResponse` the middleware writes. */
export interface NodeResponseLike {
  statusCode: number
  setHeader(name: string, value: string | number): unknown
  end(): unknown
}

/** A Node (Connect/Express-style) middleware: answers a redirect, or hands over to `next`. */
export type RedirectMiddleware = (
  request: NodeRequestLike,
  response: NodeResponseLike,
  next: (error?: unknown) => void,
) => void

/**
 * The origin-form target (`/path?query`) of a request line's target: a proxy-style absolute
 * target (`http://host/path`) loses its scheme and host, byte for byte otherwise.
 */
function originForm(target: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target)
  if (scheme === null) return target
  const rest = target.slice(scheme[0].length)
  return rest.startsWith('/') ? rest : `/${rest}`
}

/**
 * Node middleware `(req, res, next)` that answers requests matching an active redirect with its
 * status (301/302) and `Location`, and passes every other request to `next`. `source` is a matcher
 * (`createRedirectMatcher`) or a loader that keeps one fresh (`createRedirectLoader`). Works with
 * `node:http`, Express, Connect and anything else with their request and response shapes.
 *
 * ```ts
 * const redirects = createRedirectMiddleware(await createRedirectLoader(lectern))
 * app.use(redirects) // Express
 * http.createServer((req, res) => redirects(req, res, () => serve(req, res))) // node:http
 * ```
 */
export function createRedirectMiddleware(source: RedirectSource): RedirectMiddleware {
  return (request, response, next) => {
    const target = request.originalUrl ?? request.url
    let answer: RedirectMatch | null
    try {
      answer = target === undefined ? null : source.match(originForm(target))
    } catch (error) {
      next(error)
      return
    }
    if (answer === null) {
      next()
      return
    }
    response.statusCode = answer.status
    response.setHeader('Location', answer.location)
    response.setHeader('Content-Length', 0)
    response.end()
  }
}

/**
 * A fetch-style handler (`Request` → `Response | null`) for edge runtimes, Deno, Bun, Hono,
 * Next.js middleware and Service Workers: the redirect as a `Response` (empty body, status 301/302,
 * `Location`), or `null` when the request should be served as usual.
 *
 * `Request.url` is already parsed by the runtime, so its path arrives normalized (`/a/../b` as
 * `/b`, non-ASCII characters percent-encoded); matching works on that.
 *
 * ```ts
 * const redirect = createRedirectHandler(await createRedirectLoader(lectern))
 * export default { fetch: (request: Request) => redirect(request) ?? serve(request) }
 * ```
 */
export function createRedirectHandler(source: RedirectSource): (request: Request) => Response | null {
  return (request) => {
    const url = new URL(request.url)
    const answer = source.match(`${url.pathname}${url.search}`)
    if (answer === null) return null
    return new Response(null, { status: answer.status, headers: { Location: answer.location } })
  }
}
