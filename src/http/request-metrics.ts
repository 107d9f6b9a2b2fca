import {
  Counter,
  Histogram,
  type MetricObjectWithValues,
  type MetricValueWithName,
  type Registry,
} from 'prom-client'

/** The duration histogram's upper bounds, in seconds. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

/** The responses of one method of one route: by status, and how long they took. */
interface RouteTally {
  readonly method: string
  readonly route: string
  readonly statuses: Map<number, number>
  /** Responses within each bound and above the last (not cumulative: summed when scraped). */
  readonly buckets: number[]
  sum: number
  count: number
}

/**
 * Responses counted by method, route and status, and timed, as plain numbers. prom-client's
 * `inc` and `observe` validate and hash their labels on every call (a string built, sorted and
 * looked up, and a float turned into a property name per bucket): about 2 µs of a 40 µs request.
 * Here a response costs two map lookups and a few additions, and the numbers become prom-client's
 * metrics only when they are scraped.
 */
export class RequestTally {
  private readonly routes = new Map<string, Map<string, RouteTally>>()

  record(method: string, route: string, status: number, seconds: number): void {
    let methods = this.routes.get(route)
    if (methods === undefined) {
      methods = new Map()
      this.routes.set(route, methods)
    }
    let tally = methods.get(method)
    if (tally === undefined) {
      tally = {
        method,
        route,
        statuses: new Map(),
        buckets: DURATION_BUCKETS.map(() => 0).concat(0),
        sum: 0,
        count: 0,
      }
      methods.set(method, tally)
    }
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1)
    // The first bound the duration is within, as prom-client's `observe` places it.
    let bucket = 0
    while (bucket < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[bucket] as number)) bucket++
    tally.buckets[bucket] = (tally.buckets[bucket] as number) + 1
    tally.sum += seconds
    tally.count += 1
  }

  *tallies(): IterableIterator<Readonly<RouteTally>> {
    for (const methods of this.routes.values()) yield* methods.values()
  }
}

type DurationLabel = 'method' | 'route' | 'le'

/**
 * The duration histogram, read from a tally: prom-client formats it as it formats its own
 * histograms (cumulative `_bucket` lines with `le` first, then `_sum` and `_count`).
 */
class TalliedHistogram extends Histogram<DurationLabel> {
  /** The same histogram in no registry, never observed: prom-client's name, help, type and aggregation for this one. */
  private readonly empty: Histogram<DurationLabel>

  constructor(
    private readonly tally: RequestTally,
    options: { name: string; help: string; registers: Registry[] },
  ) {
    const configuration = {
      ...options,
      labelNames: ['method', 'route'] as DurationLabel[],
      buckets: DURATION_BUCKETS,
    }
    super(configuration)
    this.empty = new Histogram({ ...configuration, registers: [] })
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<DurationLabel>>> {
    const empty = await this.empty.get()
    const bucket = `${empty.name}_bucket`
    const values: MetricValueWithName<DurationLabel>[] = []
    for (const { method, route, buckets, sum, count } of this.tally.tallies()) {
      let cumulative = 0
      DURATION_BUCKETS.forEach((le, index) => {
        cumulative += buckets[index] as number
        values.push({ labels: { le, method, route }, value: cumulative, metricName: bucket })
      })
      values.push(
        { labels: { le: '+Inf', method, route }, value: count, metricName: bucket },
        { labels: { method, route }, value: sum, metricName: `${empty.name}_sum` },
        { labels: { method, route }, value: count, metricName: `${empty.name}_count` },
      )
    }
    return { ...empty, values }
  }

  /** What the registry reads when a metric has it (prom-client's own histogram defines it): the same. */
  getForPromString() {
    return this.get()
  }
}

/**
 * `lectern_http_requests_total` and `lectern_http_request_duration_seconds` in `registry`, read
 * from the returned tally, which the app's response hook feeds.
 */
export function registerRequestMetrics(registry: Registry): RequestTally {
  const tally = new RequestTally()
  new Counter({
    name: 'lectern_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
    collect() {
      this.reset()
      for (const { method, route, statuses } of tally.tallies())
        for (const [status, count] of statuses) this.inc({ method, route, status }, count)
    },
  })
  new TalliedHistogram(tally, {
    name: 'lectern_http_request_duration_seconds',
    help: 'Time from request to response, by method and route',
    registers: [registry],
  })
  return tally
}
