import type { FastifyInstance, LogLevel } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { DatabaseHandle } from '../db/database.js'
import type { RateLimiter } from '../ratelimit/limiter.js'

export interface Metrics {
  registry: Registry
  rateLimitRejections: Counter
}

/**
 * Prometheus metrics of one app: requests by route and status, latency, rate-limit rejections,
 * whether the limiter has fallen back to memory, and database pool usage. Each app gets its own
 * registry so several apps can live in one process (tests) without clashing.
 */
export function registerMetrics(
  app: FastifyInstance,
  deps: { database: Pick<DatabaseHandle, 'poolStats'>; limiter: RateLimiter; logLevel: LogLevel },
): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'lectern_' })

  const requests = new Counter({
    name: 'lectern_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'lectern_http_request_duration_seconds',
    help: 'Time from request to response, by method and route',
    labelNames: ['method', 'route'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })
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

  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL, keeps the label set small (ids never become labels).
    const route = request.routeOptions.url ?? 'unmatched'
    requests.inc({ method: request.method, route, status: reply.statusCode })
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000)
  })

  app.get('/metrics', { logLevel: deps.logLevel }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  )

  return { registry, rateLimitRejections }
}
