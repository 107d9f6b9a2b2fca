import { LRUCache } from 'lru-cache'
import type { PreparedQuery } from '../prepared.js'

/** The order key of a list row: every list orders by (created_at, id), ascending or descending. */
export interface OrderKey {
  created_at: string
  id: string
}

/** The prepared queries a pager needs for one list (one table, one filter shape, one order). */
export interface PagerQueries<Row> {
  /** `{ total }` for the scope. */
  count: PreparedQuery<{ total: number | string }>
  /** Rows from the start of the list: placeholders `limit`, `offset`. */
  fromStart: PreparedQuery<Row>
  /** Rows from a boundary key on (inclusive): placeholders `createdAt`, `id`, `limit`, `offset`. */
  fromKey: PreparedQuery<Row>
  /** Every `step`-th order key from the start (positions 0, step, 2·step, …): placeholder `step`. */
  boundaries: PreparedQuery<OrderKey>
}

interface Cached<T> {
  version: number
  value: T
}

/** Every this many rows the position index remembers an order key: a divisor of the usual page sizes
 * (20, 100), so most pages start exactly on a remembered key and skip nothing. */
const STEP = 20

/**
 * Pages through one ordered list without `COUNT(*)` or deep `OFFSET` on every request. Totals and a
 * position index (the order key of every 20th row) are kept per content version: while the
 * version is unchanged the data is unchanged, so both are exact. Page N then starts from the
 * nearest remembered key and skips fewer than 20 rows, whatever its depth. Without a version
 * (callers that cannot say which version they read) nothing is cached and plain OFFSET is used.
 */
export class KeysetPager<Row> {
  private readonly totals = new LRUCache<string, Cached<number>>({ max: 256 })
  private readonly indexes = new LRUCache<string, Cached<OrderKey[]>>({ max: 32 })
  private readonly building = new Map<string, Promise<OrderKey[]>>()

  constructor(private readonly queries: PagerQueries<Row>) {}

  /** The number of rows in `scope` (the list plus its filter values, e.g. one form's id). */
  async total(scope: string, values: Record<string, unknown>, version?: number): Promise<number> {
    const cached = this.totals.get(scope)
    if (version !== undefined && cached?.version === version) return cached.value
    const [row] = await this.queries.count(values)
    const total = Number(row?.total ?? 0)
    if (version !== undefined) this.totals.set(scope, { version, value: total })
    return total
  }

  /** `limit` rows from position `offset` of `scope`. */
  async page(
    scope: string,
    values: Record<string, unknown>,
    offset: number,
    limit: number,
    version?: number,
  ): Promise<Row[]> {
    if (version === undefined || offset < STEP) return this.queries.fromStart({ ...values, limit, offset })
    const index = await this.positionIndex(scope, values, version)
    const slot = Math.floor(offset / STEP)
    // Past the last remembered key the page starts beyond the end of the list.
    if (slot >= index.length) return []
    const key = index[slot]
    return this.queries.fromKey({
      ...values,
      createdAt: key.created_at,
      id: key.id,
      limit,
      offset: offset - slot * STEP,
    })
  }

  private async positionIndex(
    scope: string,
    values: Record<string, unknown>,
    version: number,
  ): Promise<OrderKey[]> {
    const cached = this.indexes.get(scope)
    if (cached?.version === version) return cached.value
    // Concurrent requests for a fresh version share one scan instead of each running their own.
    const inFlight = `${scope}\u0000${version}`
    let pending = this.building.get(inFlight)
    if (!pending) {
      pending = this.queries
        .boundaries({ ...values, step: STEP })
        .finally(() => this.building.delete(inFlight))
      this.building.set(inFlight, pending)
    }
    const index = await pending
    this.indexes.set(scope, { version, value: index })
    return index
  }
}
