import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { FastifyInstance, LogLevel } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { DatabaseHandle } from '../db/database.js'
import { ApiError, type ErrorStyle, errorLabel } from '../errors.js'
import type { RateLimiter } from '../ratelimit/limiter.js'
import { registerRequestMetrics } from './request-metrics.js'

export interface Metrics {
  registry: Registry
  rateLimitRejections: Counter
}

/** Who may read `/metrics`, from `METRICS_TOKEN` and `METRICS_PORT`. */
export interface MetricsAccess {
  /** When set, every scrape must send `Authorization: Bearer <token>`, wherever metrics are served. */
  token?: string
  /** False when a separate listener (`METRICS_PORT`) serves them: the API port then has no `/metrics`. */
  onApiPort: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's metrics, for a separate metrics listener (`serveMetrics`). */
    metrics: Metrics
  }
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const

const digest = (value: string) => createHash('sha256').update(value).digest()

/** Compares a presented token with the configured one in constant time (digests have one length). */
function tokenMatches(expected: string, authorization: string | undefined): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '')
  return match !== null && timingSafeEqual(digest(match[1]), digest(expected))
}

/**
 * Why a scrape is refused, or undefined when it may read the metrics. With a token, the token
 * decides. Without one, only this machine may read them on the API port: a direct connection from
 * a loopback address that no proxy forwarded (a reverse proxy on the same machine connects from
 * loopback too, but says whom it forwards). Anyone else gets the 404 that an unknown path gets, so
 * the endpoint does not advertise itself.
 */
export function metricsRefusal(
  access: Pick<MetricsAccess, 'token'>,
  request: { headers: IncomingHttpHeaders; remoteAddress: string | undefined; separateListener: boolean },
): ApiError | undefined {
  if (access.token !== undefined) {
    const authorization = request.headers.authorization
    if (authorization === undefined || authorization.trim() === '')
      return new ApiError('missing_authorization_header', 'The metrics need a bearer token', {
        'WWW-Authenticate': 'Bearer',
      })
    return tokenMatches(access.token, authorization)
      ? undefined
      : new ApiError('invalid_api_key', 'The metrics token is not right', {
          'WWW-Authenticate': 'Bearer error="invalid_token"',
        })
  }
  if (request.separateListener) return undefined
  const forwarded = FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined)
  if (!forwarded && LOOPBACK.test(request.remoteAddress ?? '')) return undefined
  return new ApiError('resource_not_found', 'The requested resource does not exist')
}

/**
 * Serves the app's metrics on a listener of their own (`METRICS_PORT` at `METRICS_HOST`), so that
 * the API port never exposes them. Only `GET /metrics` is served there; everything else is a 404.
 */
export async function serveMetrics(
  metrics: Metrics,
  options: { host: string; port: number; token?: string; style: ErrorStyle },
): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) =>
      response
        .writeHead(status, {
          'Content-Type': type,
          'Content-Length': Buffer.byteLength(body),
          'X-Request-Id': randomUUID(),
          ...headers,
        })
        .end(request.method === 'HEAD' ? undefined : body)
    const path = (request.url ?? '').split('?')[0]
    const refusal =
      path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')
        ? new ApiError('resource_not_found', 'The requested resource does not exist')
        : metricsRefusal(options, {
            headers: request.headers,
            remoteAddress: request.socket.remoteAddress,
            separateListener: true,
          })
    if (refusal) {
      const body = JSON.stringify({
        error: errorLabel(refusal.type, options.style),
        message: refusal.message,
      })
      send(refusal.status, 'application/json; charset=utf-8', body, refusal.headers)
      return
    }
    metrics.registry.metrics().then(
      (text) => send(200, metrics.registry.contentType, text),
      () =>
        send(
          500,
          'application/json; charset=utf-8',
          JSON.stringify({
            error: errorLabel('internal_error', options.style),
            message: 'The metrics could not be collected',
          }),
        ),
    )
  })
  server.keepAliveTimeout = 5_000
  server.requestTimeout = 10_000
  server.headersTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const address = server.address() as { address: string; port: number }
  const host = address.address.includes(':') ? `[${address.address}]` : address.address
  return { server, url: `http://${host}:${address.port}` }
}

/**
 * Prometheus metrics of one app: requests by route and status, latency, rate-limit rejections,
 * whether the limiter has fallen back to memory, and database pool usage. Each app gets its own
 * registry so several apps can live in one process (tests) without clashing.
 */
export function registerMetrics(
  app: FastifyInstance,
  deps: {
    database: Pick<DatabaseHandle, 'poolStats'>
    limiter: RateLimiter
    logLevel: LogLevel
    access: MetricsAccess
  },
): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'lectern_' })

  const requests = registerRequestMetrics(registry)
  const rateLimitRejections = new Counter({
    name: 'lectern_rate_limit_rejections_total',
    help: 'Requests refused with 429',
    registers: [registry],
  })
  new Gauge({
    name: 'lectern_rate_limiter_fallback',
    help: '1 while the shared rate-limit store (Redis) is unreachable and this instance counts in memory',
    registers: [registry],
    collect() {
      this.set(deps.limiter.status().fallback ? 1 : 0)
    },
  })
  new Gauge({
    name: 'lectern_rate_limiter_shared',
    help: '1 when rate limits are counted in Redis, shared by all instances',
    registers: [registry],
    collect() {
      const status = deps.limiter.status()
      this.set(status.store === 'redis' && !status.fallback ? 1 : 0)
    },
  })
  new Gauge({
    name: 'lectern_db_pool_connections',
    help: 'Database connections by state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { total, idle, waiting } = deps.database.poolStats()
      this.set({ state: 'total' }, total)
      this.set({ state: 'idle' }, idle)
      this.set({ state: 'in_use' }, total - idle)
      this.set({ state: 'waiting' }, waiting)
    },
  })

  // A callback hook, not an async one: it never waits, and a promise per response is not free.
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, not the URL, keeps the label set small (ids never become labels).
    const route = request.routeOptions.url ?? 'unmatched'
    requests.record(request.method, route, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })

  const metrics = { registry, rateLimitRejections }
  app.decorate('metrics', metrics)
  if (deps.access.onApiPort) {
    app.get('/metrics', { logLevel: deps.logLevel }, async (request, reply) => {
      const refusal = metricsRefusal(deps.access, {
        headers: request.headers,
        remoteAddress: request.socket.remoteAddress,
        separateListener: false,
      })
      if (refusal) throw refusal
      return reply.type(registry.contentType).send(await registry.metrics())
    })
  }
  return metrics
}
