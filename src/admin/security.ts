import type { CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { csrfTokenMatches, newToken } from '../services/sessions.js'
import type { Access } from './access.js'
import { expiredForm } from './errors.js'

/** The session cookie: an opaque token, sent only to the dashboard's own paths. */
export const SESSION_COOKIE = 'lectern_session'
/** The double-submit token of the forms used before signing in (setup and sign-in). */
export const FORM_COOKIE = 'lectern_form'
/** The name of the CSRF field every state-changing form carries. */
export const CSRF_FIELD = '_csrf'

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Whether the browser reached us over HTTPS, directly or through a proxy that terminated TLS. The
 * forwarded header is trusted only to add `Secure` to cookies, which can never weaken them.
 */
function servedOverHttps(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-proto']
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim()
  return request.protocol === 'https' || first === 'https'
}

/** Cookies the browser never shows to scripts, never sends along cross-site requests but links, and only to `/admin`. */
function cookieOptions(request: FastifyRequest): CookieSerializeOptions {
  return { path: '/admin', httpOnly: true, sameSite: 'lax', secure: servedOverHttps(request) }
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, cookieOptions(request))
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(request))
}

/**
 * The token a signed-out form must send back: the value of the form cookie, set now if the browser
 * has none. A cross-site page can make a browser post a form, but cannot read or set this cookie.
 */
export function signedOutFormToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[FORM_COOKIE]
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing
  const token = newToken()
  reply.setCookie(FORM_COOKIE, token, cookieOptions(request))
  return token
}

/**
 * Refuses a state-changing request that may come from another site: a browser-reported cross-site
 * origin, or a missing or wrong CSRF token — the session's synchronizer token when signed in, the
 * double-submit form cookie on public forms.
 */
export function checkCsrf(request: FastifyRequest, access: Access | undefined): void {
  if (SAFE_METHODS.has(request.method)) return
  if (request.headers['sec-fetch-site'] === 'cross-site') throw expiredForm()
  const origin = request.headers.origin
  if (origin !== undefined) {
    let host: string | undefined
    try {
      host = new URL(origin).host
    } catch {
      host = undefined
    }
    if (host !== request.host) throw expiredForm()
  }
  const body = request.body as Record<string, unknown> | undefined
  const given = body?.[CSRF_FIELD] ?? request.headers['x-csrf-token']
  const expected = access === 'public' ? request.cookies[FORM_COOKIE] : request.admin?.csrfToken
  if (!expected || !csrfTokenMatches(expected, given)) throw expiredForm()
}
