import type { FastifyReply, FastifyRequest } from 'fastify'
import { NotFoundError } from '../errors.js'
import type { SafeUrl } from '../html.js'
import { isSafeId } from '../ids.js'
import type { AdminSession, Flash, SessionService } from '../services/sessions.js'

/** Dashboard lists show this many rows per page. */
export const PAGE_SIZE = 20

/** A text field of the submitted form; missing or repeated fields read as the empty string. */
export function field(request: FastifyRequest, name: string): string {
  const value = (request.body as Record<string, unknown> | undefined)?.[name]
  if (typeof value === 'string') return value
  if (Buffer.isBuffer(value)) return value.toString('utf8')
  return ''
}

/** Every value of a field sent several times (ticked checkboxes, a multiple select), as text. */
export function fields(request: FastifyRequest, name: string): string[] {
  const value = (request.body as Record<string, unknown> | undefined)?.[name]
  const list: unknown[] = Array.isArray(value) ? value : value === undefined ? [] : [value]
  return list.filter((item): item is string => typeof item === 'string')
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
