import type { FastifyInstance } from 'fastify'
import { ValidationError } from '../../errors.js'
import { type SafeUrl, sameSitePath, url } from '../../html.js'
import { characterProblem } from '../../limits.js'
import type { Services } from '../../services/index.js'
import { SignInUnavailableError } from '../../services/sessions.js'
import { DashboardError } from '../errors.js'
import { field, seeOther } from '../requests.js'
import { clearSessionCookie, SESSION_COOKIE, setSessionCookie, signedOutFormToken } from '../security.js'
import { loginPage, setupPage } from '../views/auth.js'
import { sendPage } from '../views/layout.js'

const NOTICES: Record<string, string> = {
  'setup-done': 'Your admin account is ready: sign in with it.',
  'signed-out': 'You have signed out.',
  'password-checks':
    'You were signed out after too many wrong current passwords. Sign in again to continue; if that was not you, change your password.',
}

/**
 * Where to go after signing in: a dashboard path the user asked for, or the overview. Anything
 * else (another host, a protocol-relative or dot-segment path) is ignored, so the sign-in form can
 * never be used to send someone off-site.
 */
export function safeNext(value: string): SafeUrl | undefined {
  return /^\/admin(?:[/?][^\s\\]*)?$/.test(value) && !value.includes('//') && !value.includes('..')
    ? sameSitePath(value, '/admin')
    : undefined
}

const alreadySetUp = () =>
  new DashboardError(404, 'Page not found', 'Lectern is already set up. Sign in at /admin/login.')

/** First-run setup, sign-in and sign-out. */
export function registerAuthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/setup', { config: { access: 'public' } }, async (request, reply) => {
    if (await services.users.hasUsers()) throw alreadySetUp()
    return sendPage(reply, setupPage({ csrf: signedOutFormToken(request, reply) }))
  })

  app.post('/setup', { config: { access: 'public' } }, async (request, reply) => {
    if (await services.users.hasUsers()) throw alreadySetUp()
    const email = field(request, 'email')
    const password = field(request, 'password')
    const again = (problems: string[]) =>
      sendPage(reply, setupPage({ csrf: signedOutFormToken(request, reply), email, problems }), 422)
    if (password !== field(request, 'confirm')) return again(['The two passwords do not match'])
    try {
      await services.users.createFirstAdmin({ email, password })
    } catch (error) {
      if (error instanceof ValidationError) return again(error.problems)
      throw error
    }
    return seeOther(reply, url`/admin/login?notice=setup-done`)
  })

  app.get('/login', { config: { access: 'public' } }, async (request, reply) => {
    if (!(await services.users.hasUsers())) return seeOther(reply, url`/admin/setup`)
    const query = request.query as Record<string, unknown>
    const next = typeof query.next === 'string' ? safeNext(query.next) : undefined
    if (request.admin) return seeOther(reply, next ?? url`/admin`)
    const notice = typeof query.notice === 'string' ? NOTICES[query.notice] : undefined
    return sendPage(reply, loginPage({ csrf: signedOutFormToken(request, reply), next, notice }))
  })

  app.post('/login', { config: { access: 'public' } }, async (request, reply) => {
    const email = field(request, 'email')
    const next = safeNext(field(request, 'next'))
    const again = (status: number, problem: string) =>
      sendPage(
        reply,
        loginPage({ csrf: signedOutFormToken(request, reply), email, next, problems: [problem] }),
        status,
      )
    // No account's email holds a NUL or a lone surrogate (and PostgreSQL's text cannot): such an
    // email is wrong without asking the database, the same answer on every dialect.
    if (characterProblem(email) !== null) return again(401, 'The email or password is not right')
    let result: Awaited<ReturnType<typeof services.sessions.signIn>>
    try {
      result = await services.sessions.signIn({
        email,
        password: field(request, 'password'),
        ip: request.ip,
        previousToken: request.cookies[SESSION_COOKIE],
      })
    } catch (error) {
      if (!(error instanceof SignInUnavailableError)) throw error
      request.log.error({ err: error.cause }, 'sign-in throttle unavailable: refusing sign-ins')
      reply.header('Retry-After', '60')
      return again(503, error.message)
    }
    switch (result.status) {
      case 'signed_in':
        setSessionCookie(request, reply, result.token)
        return seeOther(reply, next ?? url`/admin`)
      case 'invalid':
        return again(401, 'The email or password is not right')
      case 'disabled':
        return again(403, 'This account is disabled: a global admin can enable it again')
      case 'busy':
        reply.header('Retry-After', String(result.retryAfterSeconds))
        return again(503, 'Too many sign-ins are being checked right now. Please try again in a few seconds.')
      case 'locked': {
        const minutes = Math.ceil(result.retryAfterSeconds / 60)
        reply.header('Retry-After', String(result.retryAfterSeconds))
        return again(
          429,
          `Too many failed sign-in attempts from your network. For your security, signing in from here is paused: try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        )
      }
    }
  })

  app.post('/logout', { config: { access: 'signed-in' } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE]
    if (token) await services.sessions.signOut(token)
    clearSessionCookie(request, reply)
    return seeOther(reply, url`/admin/login?notice=signed-out`)
  })
}
