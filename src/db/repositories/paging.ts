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

/**
 * A position index held compactly: every key's text in one string and where each part ends in a
 * typed array, instead of an object and two strings per key: a 10M-row list has 500,000 keys,
 * which as objects take about 70 MB of heap per instance and held like this about 34 MB, with
 * nothing in it for the collector to trace.
 */
class PositionIndex {
  private readonly text: string
  /** For key i: where its `created_at` ends (2i) and where its `id` ends (2i + 1). */
  private readonly ends: Uint32Array
  readonly length: number

  constructor(keys: readonly OrderKey[]) {
    this.length = keys.length
    this.ends = new Uint32Array(keys.length * 2)
    const parts: string[] = []
    let end = 0
    for (let i = 0; i < keys.length; i++) {
      const { created_at, id } = keys[i]
      parts.push(created_at, id)
      end += created_at.length
      this.ends[2 * i] = end
      end += id.length
      this.ends[2 * i + 1] = end
    }
    this.text = parts.join('')
  }

  at(i: number): OrderKey {
    const start = i === 0 ? 0 : this.ends[2 * i - 1]
    const middle = this.ends[2 * i]
    return { created_at: this.text.slice(start, middle), id: this.text.slice(middle, this.ends[2 * i + 1]) }
  }
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
  private readonly indexes = new LRUCache<string, Cached<PositionIndex>>({ max: 32 })
  /** Counts and scans running for a scope at a version, shared by the requests that need them. */
  private readonly running = new Map<string, Promise<unknown>>()

  constructor(private readonly queries: PagerQueries<Row>) {}

  /** The number of rows in `scope` (the list plus its filter values, e.g. one form's id). */
  async total(scope: string, values: Record<string, unknown>, version?: number): Promise<number> {
    const count = async () => Number((await this.queries.count(values))[0]?.total ?? 0)
    if (version === undefined) return count()
    const cached = this.totals.get(scope)
    if (cached?.version === version) return cached.value
    const total = await this.once(`total\u0000${scope}\u0000${version}`, count)
    this.totals.set(scope, { version, value: total })
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
    const key = index.at(slot)
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
  ): Promise<PositionIndex> {
    const cached = this.indexes.get(scope)
    if (cached?.version === version) return cached.value
    const index = await this.once(
      `index\u0000${scope}\u0000${version}`,
      async () => new PositionIndex(await this.queries.boundaries({ ...values, step: STEP })),
    )
    this.indexes.set(scope, { version, value: index })
    return index
  }

  /**
   * Runs `work` once for every caller asking for `key` while it runs. After a change, every request
   * in flight misses the caches at the new version together: without this each would count the
   * whole list (0.1–0.2 s at a million rows on SQLite, where it also blocks the server) or scan it
   * for the position index, one after another.
   */
  private once<T>(key: string, work: () => Promise<T>): Promise<T> {
    let pending = this.running.get(key) as Promise<T> | undefined
    if (pending === undefined) {
      pending = work().finally(() => this.running.delete(key))
      this.running.set(key, pending)
    }
    return pending
  }
}
