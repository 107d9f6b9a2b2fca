import { STATUS_CODES } from 'node:http'
import { fileURLToPath } from 'node:url'
import fastifyCookie from '@fastify/cookie'
import fastifyFormbody from '@fastify/formbody'
import fastifyHelmet, { type FastifyHelmetOptions } from '@fastify/helmet'
import fastifyMultipart from '@fastify/multipart'
import fastifyStatic from '@fastify/static'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, DomainError, type ErrorKind, UNAVAILABLE_RETRY_AFTER_S } from '../errors.js'
import { url } from '../html.js'
import type { Services } from '../services/index.js'
import { allows } from './access.js'
import { DashboardError, forbidden } from './errors.js'
import { seeOther } from './requests.js'
import { registerAccountRoutes } from './routes/account.js'
import { registerAuditRoutes } from './routes/audit.js'
import { registerAuthRoutes } from './routes/auth.js'
import { registerContentRoutes } from './routes/content.js'
import { registerFormIntakeRoutes } from './routes/form-intake.js'
import { registerHomeRoutes } from './routes/home.js'
import { registerKeyPageRoutes } from './routes/key-page.js'
import { registerKeyRoutes } from './routes/keys.js'
import { registerRedirectRoutes } from './routes/redirects.js'
import { registerSubmissionRoutes } from './routes/submissions.js'
import { registerUserRoutes } from './routes/users.js'
import { registerWebhookRoutes } from './routes/webhooks.js'
import { checkCsrf, clearSessionCookie, SESSION_COOKIE } from './security.js'
import { errorPage } from './views/errors.js'
import { sendPage } from './views/layout.js'

export interface AdminDashboardOptions {
  services: Services
  /** `PUBLIC_URL`: where a site's forms post to; unset, the dashboard's own origin. */
  publicUrl?: string | undefined
  /** Whether `SMTP_URL` and `MAIL_FROM` are set: the form editor and the webhooks screen say when not. */
  mailConfigured?: boolean
}

/** The stylesheet and script, beside this module in the source and in `dist/` (the build copies them). */
export const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url))

/**
 * The largest CSV a redirect import accepts: 8 MiB, some 400,000 short redirects. Checking a file is
 * linear in its rows and yields to other requests as it goes, so the limit is about memory only.
 */
const MAX_UPLOAD_BYTES = 8 * 1_048_576

/**
 * Helmet's defaults, tightened: scripts and styles only from our own files (no inline code at all),
 * never framed, forms only posted back here. `upgrade-insecure-requests` is left out so that a
 * dashboard served over plain HTTP on a private address still loads its own stylesheet. The
 * referrer goes to our own pages only: with none at all, browsers send `Origin: null` with forms,
 * and the origin check could not tell our forms from anyone else's.
 */
const HELMET_OPTIONS: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      objectSrc: ["'none'"],
      upgradeInsecureRequests: null,
    },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'same-origin' },
}

/** The page the dashboard shows for each kind of service failure. */
const DASHBOARD_ANSWERS: Record<ErrorKind, (error: DomainError, request: FastifyRequest) => DashboardError> =
  {
    invalid: (error) => new DashboardError(400, 'That did not work', error.message),
    not_found: (error) => new DashboardError(404, 'Not found', error.message),
    unavailable: (error, request) => {
      request.log.warn({ err: error.cause ?? error }, 'backing service unavailable')
      return new DashboardError(
        503,
        'Temporarily unavailable',
        'The database cannot be reached right now. Please try again in a moment.',
        { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) },
      )
    },
  }

/** Maps anything thrown by a dashboard route to the page that explains it. */
/** Requests whose route handler started: their body was parsed. */
const reachedHandler = new WeakSet<FastifyRequest>()

function toDashboardError(error: unknown, request: FastifyRequest): DashboardError {
  if (error instanceof DashboardError) return error
  if (error instanceof DomainError) return DASHBOARD_ANSWERS[error.kind](error, request)
  if (error instanceof ApiError)
    return new DashboardError(error.status, 'Please try again', error.message, error.headers)
  // The multipart parser throws plain errors; a multipart request that failed before its handler
  // ran (the body could not be parsed) was the sender's mistake, not ours.
  if (request.isMultipart() && !reachedHandler.has(request) && !(error as Partial<FastifyError>)?.statusCode)
    return new DashboardError(400, 'Bad request', 'The upload could not be read. Go back and try again.')
  const status = (error as Partial<FastifyError> | null)?.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const message =
      status === 413
        ? 'What you sent is too large: files may be at most 1 MB.'
        : 'The request could not be understood. Go back and try again.'
    return new DashboardError(status, STATUS_CODES[status] ?? 'Bad request', message)
  }
  request.log.error({ err: error }, 'unhandled error in the dashboard')
  return new DashboardError(
    500,
    'Something went wrong',
    'An unexpected error stopped this page. It has been logged; please try again.',
  )
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: DashboardError): FastifyReply {
  const page = errorPage({
    title: error.title,
    message: error.message,
    session: request.admin,
    requestId: error.status >= 500 ? request.id : undefined,
  })
  return sendPage(reply.headers({ ...error.headers, 'Cache-Control': 'no-store' }), page, error.status)
}

/**
 * The admin dashboard, mounted at `/admin`: server-rendered pages over the same services as the API
 * and the CLI. It has its own stack, apart from `/api/v1`: session cookies instead of API keys,
 * CSRF tokens on every change, security headers, and HTML error pages instead of the JSON envelope.
 */
export async function adminDashboard(app: FastifyInstance, options: AdminDashboardOptions): Promise<void> {
  const { services } = options
  await app.register(fastifyHelmet, HELMET_OPTIONS)
  app.decorateRequest('admin', null)
  app.setErrorHandler((error, request, reply) => sendError(request, reply, toDashboardError(error, request)))
  app.addHook('preHandler', async (request) => {
    reachedHandler.add(request)
  })
  await app.register(fastifyCookie)
  // An address no route answers reaches no route's hooks either: the session is read here, so that
  // a signed-in user is offered the way back to the overview, not to the sign-in page.
  app.setNotFoundHandler(async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE]
    if (token !== undefined) request.admin = await services.sessions.authenticate(token)
    return sendError(
      request,
      reply,
      new DashboardError(404, 'Page not found', 'There is no dashboard page at this address.'),
    )
  })
  await app.register(fastifyStatic, { root: STATIC_DIR, prefix: '/static/', index: false, maxAge: '1h' })

  await app.register(async (pages) => {
    await pages.register(fastifyFormbody)
    await pages.register(fastifyMultipart, {
      attachFieldsToBody: 'keyValues',
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 10, parts: 11 },
    })

    // The session is read fresh from the database on every request: a role change, a disabled user or
    // an expired session takes effect at once, on every instance.
    pages.addHook('onRequest', async (request, reply) => {
      const token = request.cookies[SESSION_COOKIE]
      if (token === undefined) return
      request.admin = await services.sessions.authenticate(token)
      if (!request.admin) clearSessionCookie(request, reply)
    })

    // After the body is parsed: the CSRF token of a change, then who may use the route.
    pages.addHook('preHandler', async (request, reply) => {
      const access = request.routeOptions.config.access
      if (access !== 'public' && !request.admin) {
        return seeOther(
          reply,
          request.method === 'GET' && request.url !== '/admin'
            ? url`/admin/login?next=${request.url}`
            : url`/admin/login`,
        )
      }
      checkCsrf(request, access)
      if (access !== 'public' && !allows(access, request.admin?.user.role ?? '')) throw forbidden()
    })

    // Dashboard pages hold personal data and one-time secrets: never stored by a browser or a proxy.
    pages.addHook('onSend', async (_request, reply) => {
      reply.header('Cache-Control', 'no-store')
    })

    registerAuthRoutes(pages, services)
    registerHomeRoutes(pages, services)
    registerKeyRoutes(pages, services)
    registerWebhookRoutes(pages, services, options.mailConfigured ?? false)
    registerUserRoutes(pages, services)
    registerContentRoutes(pages, services)
    registerSubmissionRoutes(pages, services)
    registerFormIntakeRoutes(pages, services, {
      publicUrl: options.publicUrl,
      mailConfigured: options.mailConfigured ?? false,
    })
    registerRedirectRoutes(pages, services)
    registerAuditRoutes(pages, services)
    registerKeyPageRoutes(pages, services)
    registerAccountRoutes(pages, services)
  })
}
