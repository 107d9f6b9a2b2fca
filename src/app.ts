import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type LogLevel } from 'fastify'
import { type Config, trustProxySetting } from './config.js'
import type { DatabaseHandle } from './db/database.js'
import { ApiError, UNAVAILABLE_RETRY_AFTER_S } from './errors.js'
import { formRoute } from './http/api/v1/form.js'
import { formsRoute } from './http/api/v1/forms.js'
import { pagesRoute } from './http/api/v1/pages.js'
import { type ApiPipeline, registerApiPipeline } from './http/api/v1/pipeline.js'
import { redirectsRoute } from './http/api/v1/redirects.js'
import { submissionsRoute } from './http/api/v1/submissions.js'
import { registerOpenApi } from './http/docs/openapi.js'
import { answerConnect, createClientErrorHandler, notFound, sendApiError, toApiError } from './http/errors.js'
import { registerHome } from './http/home.js'
import { intakeFace } from './http/intake/index.js'
import { redactingLoggerOptions } from './http/logging.js'
import { registerMetrics } from './http/metrics.js'
import { parseQueryString } from './http/params.js'
import { RequestLog } from './http/request-log.js'
import { pathSuggester } from './http/suggest.js'
import { type IntakeLimiter, MemoryIntakeLimiter } from './ratelimit/intake.js'
import type { RateLimiter } from './ratelimit/limiter.js'
import { ErrorSchema } from './schemas.js'
import type { Services } from './services/index.js'

export interface AppDependencies {
  config: Pick<Config, 'ERROR_STYLE' | 'LOG_LEVEL'> &
    Partial<
      Pick<
        Config,
        | 'TRUST_PROXY'
        | 'ADMIN_DASHBOARD'
        | 'API_REFERENCE'
        | 'METRICS_PORT'
        | 'METRICS_TOKEN'
        | 'RATE_LIMIT_PER_SECOND'
        | 'INTAKE_RATE_LIMIT_PER_MINUTE'
        | 'PUBLIC_URL'
        | 'SMTP_URL'
        | 'MAIL_FROM'
      >
    >
  services: Services
  limiter: RateLimiter
  /** Counts public form posts per address; in memory with the configured limit when not given. */
  intakeLimiter?: IntakeLimiter
  /** Set `draining` to make `/readyz` fail while the API keeps serving, ahead of a shutdown. */
  lifecycle?: { draining: boolean }
  /** Checked by `/readyz` and reported in `/metrics`. */
  database: Pick<DatabaseHandle, 'ping' | 'poolStats'>
  /** Overrides of the HTTP server's timeouts, for tests that cannot wait the production values. */
  timeouts?: Partial<typeof SERVER_TIMEOUTS>
  /** Where logs go (standard output by default); tests pass a stream to read them. */
  logStream?: NodeJS.WritableStream
}

/**
 * Timeouts are set here on purpose rather than inherited from Node's or Fastify's defaults. Fastify
 * sets `keepAliveTimeout`, `requestTimeout` and the socket's idle timeout (`connectionTimeout`) on
 * the server itself from its own top-level options (72 s, none, none), overriding anything passed
 * to Node under `http`; only `headersTimeout` and `connectionsCheckingInterval` go to Node there.
 */
export const SERVER_TIMEOUTS = {
  /** The whole request, headers and body, must arrive within this (a trickled body is cut: 408). */
  requestTimeout: 30_000,
  /** The headers must arrive within this. */
  headersTimeout: 10_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeout: 5_000,
  /** A socket with no traffic either way for this long is closed, whatever it is doing. */
  connectionTimeout: 60_000,
  // How often Node checks the request and headers timeouts; its default (30 s) would let them overrun.
  connectionsCheckingInterval: 2_000,
}

/** URLs longer than this answer 414; Node's header limit (16 KiB) stops anything far longer with 431. */
export const MAX_URL_LENGTH = 8192
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

const API_PREFIX = '/api/v1'
/** Whether a request's URL is under the API's prefix (its routes, or a path it answers 404). */
const isApiPath = (url: string): boolean =>
  url.startsWith(API_PREFIX) &&
  (url.length === API_PREFIX.length || '/?'.includes(url[API_PREFIX.length] as string))

/**
 * Builds the whole HTTP application without listening, so tests can `inject()` into it or listen
 * on a port of their choosing. `server.ts` is the only caller that listens.
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const style = deps.config.ERROR_STYLE
  const timeouts = { ...SERVER_TIMEOUTS, ...deps.timeouts }
  // Set once the API's routes are registered; requests refused before routing use it to be counted.
  let pipeline: ApiPipeline | undefined
  const app = Fastify({
    trustProxy: trustProxySetting(deps.config.TRUST_PROXY),
    logger: {
      level: deps.config.LOG_LEVEL,
      ...redactingLoggerOptions(),
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    http: {
      maxHeaderSize: 16_384,
      headersTimeout: timeouts.headersTimeout,
      connectionsCheckingInterval: timeouts.connectionsCheckingInterval,
      // Node answers a request without `Host` with a bare 400 of its own; the onRequest hook below
      // answers it with the envelope instead.
      requireHostHeader: false,
    },
    keepAliveTimeout: timeouts.keepAliveTimeout,
    requestTimeout: timeouts.requestTimeout,
    connectionTimeout: timeouts.connectionTimeout,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    bodyLimit: 1_048_576,
    logController: new RequestLog(),
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id']
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
    },
    // Ids are opaque: a path parameter may be as long as the URL itself, so that an unknown form id of
    // any length is a 404 naming it (after authentication), not a router error.
    routerOptions: {
      maxParamLength: MAX_URL_LENGTH,
      ignoreTrailingSlash: false,
      querystringParser: parseQueryString,
    },
    clientErrorHandler: createClientErrorHandler(style, MAX_URL_LENGTH),
    frameworkErrors: (error, request, reply) => {
      reply.header('X-Request-Id', request.id)
      const apiError =
        error.code === 'FST_ERR_BAD_URL'
          ? new ApiError('bad_request', 'The request URL is malformed')
          : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? new ApiError('uri_too_long', 'The request URL is too long')
            : toApiError(error, request)
      if (!isApiPath(request.url) || pipeline === undefined) return sendApiError(reply, apiError, style)
      pipeline.countRefused(request, reply).then(() => sendApiError(reply, apiError, style))
    },
  })

  app.addSchema(ErrorSchema)
  // The OpenAPI document is generated from the routes registered after this, and rendered at /docs.
  await registerOpenApi(app)
  // The reference page and the dashboard are loaded only when served: an API-only instance does not
  // carry their code and assets in memory.
  if (deps.config.API_REFERENCE !== 'off') {
    const { registerApiReference } = await import('./http/docs/reference.js')
    await registerApiReference(app)
  }

  // Set when shutdown starts: requests still arriving on open connections are refused with the
  // envelope (and asked to reconnect), while those already in flight finish.
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  // Key usage is counted in memory and added to the database about once a minute; the last counts
  // are written on close, before the server closes the database.
  app.addHook('onReady', async () => {
    deps.services.usage.start((error) => app.log.warn({ err: error }, 'could not write API key usage'))
  })
  app.addHook('onClose', async () => {
    await deps.services.usage.stop()
  })
  // Submissions past a form's retention (and old spam) are deleted about hourly, by one instance.
  app.addHook('onReady', async () => {
    deps.services.intake.start((error) =>
      app.log.warn({ err: error }, 'could not delete expired submissions'),
    )
  })
  // Posts still waiting for their group's commit are written before the database closes.
  app.addHook('onClose', async () => {
    deps.services.intake.stop()
    await deps.services.intake.drained()
  })

  // A callback hook, not an async one: it never waits, and an async hook costs every request a
  // promise and a turn of the microtask queue. What it throws, Fastify hands to the error handler.
  app.addHook('onRequest', (request, reply, done) => {
    // In lower case, as Fastify keeps header names: it need not make a new string of it each time.
    reply.header('x-request-id', request.id)
    if (closing) {
      reply.header('Connection', 'close')
      throw new ApiError('service_unavailable', 'The server is shutting down, please retry', {
        'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S),
      })
    }
    // During the grace period requests are still served, but each connection is closed after its
    // response: a keep-alive client (or a balancer pinning connections to this instance) reconnects
    // and lands on an instance that stays, instead of finding this one gone mid-request.
    if (deps.lifecycle?.draining) reply.header('Connection', 'close')
    let refused: ApiError | undefined
    if (request.url.length > MAX_URL_LENGTH)
      refused = new ApiError('uri_too_long', 'The request URL is too long')
    // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 clients may leave it out.
    else if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      reply.header('Connection', 'close')
      refused = new ApiError('bad_request', 'The request has no Host header')
    }
    if (refused === undefined) return done()
    // Refused before the API's pipeline, but a valid key's answer still carries its rate limits.
    if (!isApiPath(request.url) || pipeline === undefined) return done(refused)
    pipeline.countRefused(request, reply).then(() => done(refused))
  })
  // Node hands CONNECT to a 'connect' listener and, without one, drops the socket without a word.
  app.server.on('connect', answerConnect(style))

  app.setErrorHandler((error, request, reply) => sendApiError(reply, toApiError(error, request), style))
  app.setNotFoundHandler(() => {
    throw notFound()
  })

  // Probes run every few seconds: log them only from warnings up, unless logging is quieter still.
  const probeLogLevel: LogLevel = ['fatal', 'error', 'silent'].includes(deps.config.LOG_LEVEL)
    ? deps.config.LOG_LEVEL
    : 'warn'
  const metrics = registerMetrics(app, {
    ...deps,
    logLevel: probeLogLevel,
    access: { token: deps.config.METRICS_TOKEN, onApiPort: deps.config.METRICS_PORT === undefined },
  })

  // Liveness: the process answers. It stays up while the database is down, so an orchestrator
  // does not restart an instance that will recover by itself.
  app.get('/healthz', { logLevel: probeLogLevel }, async () => ({ status: 'ok' }))

  // Readiness: this instance can serve the API now (database reachable, not shutting down).
  app.get('/readyz', { logLevel: probeLogLevel }, async () => {
    if (closing || deps.lifecycle?.draining)
      throw new ApiError('service_unavailable', 'The server is shutting down')
    await deps.database.ping()
    const limiter = deps.limiter.status()
    return {
      status: 'ready',
      database: 'ok',
      rateLimits: limiter.store === 'memory' ? 'memory' : limiter.fallback ? 'memory-fallback' : 'redis',
    }
  })

  registerHome(app, {
    dashboard: deps.config.ADMIN_DASHBOARD !== 'off',
    reference: deps.config.API_REFERENCE !== 'off',
  })

  await app.register(
    async (api) => {
      const suggestPath = pathSuggester(api)
      pipeline = registerApiPipeline(api, {
        keys: deps.services.keys,
        limiter: deps.limiter,
        perSecond: deps.config.RATE_LIMIT_PER_SECOND,
        onRateLimited: () => metrics.rateLimitRejections.inc(),
        usage: deps.services.usage,
      })
      api.route(formsRoute(deps.services.content))
      api.route(formRoute(deps.services.intake, deps.config.PUBLIC_URL))
      api.route(submissionsRoute(deps.services.content))
      api.route(pagesRoute(deps.services.content))
      api.route(redirectsRoute(deps.services.content))
      // Unknown paths under /api/v1 pass through the pipeline first: a bad key is a 401, not a 404.
      // A near miss (a trailing slash, another letter case) names the path it probably meant.
      api.setNotFoundHandler((request) => {
        throw notFound(suggestPath(request.url.split('?', 1)[0] as string))
      })
    },
    { prefix: API_PREFIX },
  )

  // Public form intake: no API key, its own body reading and answers.
  await app.register(intakeFace, {
    prefix: '/f',
    intake: deps.services.intake,
    limiter: deps.intakeLimiter ?? new MemoryIntakeLimiter(deps.config.INTAKE_RATE_LIMIT_PER_MINUTE ?? 5),
    style,
  })

  if (deps.config.ADMIN_DASHBOARD !== 'off') {
    const { adminDashboard } = await import('./admin/index.js')
    await app.register(adminDashboard, {
      prefix: '/admin',
      services: deps.services,
      publicUrl: deps.config.PUBLIC_URL,
      mailConfigured: Boolean(deps.config.SMTP_URL && deps.config.MAIL_FROM),
    })
  }

  return app
}
