import type { FastifyReply, FastifyRequest } from 'fastify'
import { NotFoundError } from '../errors.js'
import { isSafeId } from '../ids.js'
import type { AdminSession, Flash, SessionService } from '../services/sessions.js'
import type { SafeUrl } from './html.js'

/** Dashboard lists show this many rows per page. */
export const PAGE_SIZE = 20

/** A text field of the submitted form; missing or repeated fields read as the empty string. */
export function field(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name]
  if (typeof value === 'string') return value
  if (Buffer.isBuffer(value)) return value.toString('utf8')
  return ''
}

/** A checkbox or a `true`/`false` field. */
export function flag(request: FastifyRequest, name: string): boolean {
  const value = field(request, name)
  return value === 'true' || value === 'on'
}

/**
 * A path parameter of the route: always an id. One outside the id alphabet names nothing, so it is
 * a 404 at once, without asking the database (PostgreSQL refuses a NUL in a query parameter).
 */
export function pathParam(request: FastifyRequest, name: string): string {
  const value = (request.params as Record<string, string>)[name] ?? ''
  if (!isSafeId(value)) throw new NotFoundError('Nothing has that id')
  return value
}

/** The `page` query parameter: a positive integer, 1 when absent or malformed. */
export function pageNumber(request: FastifyRequest): number {
  const raw = (request.query as Record<string, unknown>).page
  const page = typeof raw === 'string' && /^[0-9]{1,9}$/.test(raw) ? Number(raw) : 1
  return Math.max(page, 1)
}

/** Paging options for a list service. */
export function paging(request: FastifyRequest) {
  return { page: pageNumber(request), pageSize: PAGE_SIZE }
}

/**
 * Finishes a change the Post/Redirect/Get way: the message waits in the session for the next page,
 * and the browser is sent there with 303, so reloading it does not repeat the change.
 */
export async function redirectWithFlash(
  sessions: SessionService,
  request: FastifyRequest,
  reply: FastifyReply,
  url: SafeUrl,
  flash: Flash,
): Promise<FastifyReply> {
  if (request.admin) await sessions.setFlash(request.admin.id, flash)
  return seeOther(reply, url)
}

/**
 * Sends the browser on with 303 See Other. The address is a `url` template's result, so every part
 * of it was percent-encoded: a hostile id cannot make the `Location` point at another route, nor hold
 * a character that is not allowed in a header.
 */
export function seeOther(reply: FastifyReply, url: SafeUrl): FastifyReply {
  return reply.redirect(url.value, 303)
}

/** The session of a route that only signed-in users reach (the access check saw to that). */
export function signedIn(request: FastifyRequest): AdminSession {
  if (!request.admin) throw new Error('the access check lets only signed-in users reach this route')
  return request.admin
}

/**
 * Where a list page sends the browser instead of rendering, given the list's `total`: a `page` past
 * the end goes to the last page, and a malformed one (`abc`, `0`) to the first, each with a message
 * saying so — rather than an empty "Page 3 of 2" or a silent page 1. Undefined when `page` is fine.
 */
export function pageRedirect(
  request: FastifyRequest,
  total: number,
  href: (page: number) => SafeUrl,
): { url: SafeUrl; flash: Flash } | undefined {
  const raw = (request.query as Record<string, unknown>).page
  if (raw === undefined) return undefined
  const last = Math.max(1, Math.ceil(total / PAGE_SIZE))
  const page = typeof raw === 'string' && /^[0-9]{1,9}$/.test(raw) ? Number(raw) : 0
  if (page < 1) {
    const shown = typeof raw === 'string' ? raw.slice(0, 30) : String(raw)
    return {
      url: href(1),
      flash: { kind: 'error', text: `“${shown}” is not a page number, so this is the first page.` },
    }
  }
  if (page > last)
    return {
      url: href(last),
      flash: {
        kind: 'error',
        text: `There is no page ${page}: the list has ${last} page${last === 1 ? '' : 's'}, and this is the last.`,
      },
    }
  return undefined
}
