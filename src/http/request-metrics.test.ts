import { Counter, Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { DURATION_BUCKETS, registerRequestMetrics } from './request-metrics.js'

/** The same two metrics as prom-client counts them itself, one `inc` and one `observe` a response. */
function promClientMetrics() {
  const registry = new Registry()
  const requests = new Counter({
    name: 'lectern_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  })
  const durations = new Histogram({
    name: 'lectern_http_request_duration_seconds',
    help: 'Time from request to response, by method and route',
    labelNames: ['method', 'route'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  })
  return {
    registry,
    record(method: string, route: string, status: number, seconds: number) {
      requests.inc({ method, route, status })
      durations.observe({ method, route }, seconds)
    },
  }
}

/**
 * A scrape with its series in a fixed order: the exposition format leaves the order of a family's
 * series free (prom-client lists them as first seen), but not the order of one series' lines.
 */
function bySeries(text: string): string[] {
  const series = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const key = line.startsWith('#')
      ? line
      : line.replace(/_(bucket|sum|count)\{/, '{').replace(/le="[^"]*",?/, '')
    series.set(key, [...(series.get(key) ?? []), line])
  }
  return [...series].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, lines]) => lines.join('\n'))
}

describe('request metrics', () => {
  it('scrape as exactly what prom-client writes for the same responses', async () => {
    const registry = new Registry()
    const tally = registerRequestMetrics(registry)
    const expected = promClientMetrics()
    const routes = ['/api/v1/forms', '/api/v1/forms/:id/submissions', '/f/:id', 'unmatched']
    const methods = ['GET', 'HEAD', 'POST']
    const statuses = [200, 304, 400, 404, 429, 500]
    // Durations on each bound (a bound holds what equals it), between bounds and beyond the last.
    const durations = [0, ...DURATION_BUCKETS, ...DURATION_BUCKETS.map((bound) => bound * 1.5), 7]
    let seed = 7
    const pick = <T>(items: readonly T[]): T => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return items[seed % items.length] as T
    }
    for (let i = 0; i < 2_000; i++) {
      const response = [pick(methods), pick(routes), pick(statuses), pick(durations)] as const
      tally.record(...response)
      expected.record(...response)
    }
    const text = await registry.metrics()
    expect(bySeries(text)).toEqual(bySeries(await expected.registry.metrics()))
    expect(text).toContain('lectern_http_request_duration_seconds_bucket{le="0.005",method="GET"')
  })

  it('count each response once, whenever they are scraped', async () => {
    const registry = new Registry()
    const tally = registerRequestMetrics(registry)
    tally.record('GET', '/api/v1/forms', 200, 0.002)
    await registry.metrics()
    tally.record('GET', '/api/v1/forms', 200, 0.002)
    const text = await registry.metrics()
    expect(text).toContain('lectern_http_requests_total{method="GET",route="/api/v1/forms",status="200"} 2')
    expect(text).toContain(
      'lectern_http_request_duration_seconds_count{method="GET",route="/api/v1/forms"} 2',
    )
    expect(text).toContain(
      'lectern_http_request_duration_seconds_bucket{le="0.0025",method="GET",route="/api/v1/forms"} 2',
    )
  })
})
