import type { Kysely } from 'kysely'
import { addUsageCounts, totalUsageSince, usageOfKeySince } from '../db/repositories/key-usage-hourly.js'
import type { Database } from '../db/tables.js'
import { UnavailableError } from '../errors.js'
import { formatTimestamp } from '../time.js'

const HOUR_MS = 3_600_000

/** Requests made with one key in one hour, and how many of them were refused with 429. */
export interface UsageCounts {
  requests: number
  rejected: number
}

/** One hour of one key's usage, for the chart: `hour` is the hour's start (canonical UTC). */
export interface HourlyUsage extends UsageCounts {
  hour: string
}

export interface UsageOptions {
  /** How often counts are added to the database (default one minute). */
  flushIntervalMs?: number
  /** Milliseconds since the epoch; tests pass a clock they move. */
  clock?: () => number
  /** Told when a flush fails; counts are kept for the next one when the database was unreachable. */
  onFlushError?: (error: unknown) => void
}

/** The hour's start, canonical UTC, of an hour number (ms since the epoch / 3,600,000). */
const hourStamp = (hour: number) => formatTimestamp(new Date(hour * HOUR_MS))

/**
 * API key usage per hour. `count` is on the API's hot path, so it only adds to a map in memory (no
 * I/O, no allocation once a key has been seen this hour); `flush` adds the counts to
 * `key_usage_hourly` in a few upserts (`db/repositories/key-usage-hourly.ts`), about once a minute, from each instance. Reads add what this
 * instance has not flushed yet, so a key's page is current here and at most a minute behind for the
 * other instances.
 */
export function createUsageService(db: Kysely<Database>, options: UsageOptions = {}) {
  const clock = options.clock ?? Date.now
  const interval = options.flushIntervalMs ?? 60_000
  // hour number → key id → counts. Swapped out whole at each flush.
  let pending = new Map<number, Map<string, UsageCounts>>()
  let timer: NodeJS.Timeout | undefined
  let reportError = options.onFlushError
  let flushing: Promise<void> | undefined

  const add = (into: typeof pending, hour: number, keyId: string, requests: number, rejected: number) => {
    let keys = into.get(hour)
    if (keys === undefined) {
      keys = new Map()
      into.set(hour, keys)
    }
    const counts = keys.get(keyId)
    if (counts === undefined) keys.set(keyId, { requests, rejected })
    else {
      counts.requests += requests
      counts.rejected += rejected
    }
  }

  const write = async (batch: typeof pending) => {
    const rows: { key_id: string; hour: string; requests: number; rejected: number }[] = []
    for (const [hour, keys] of batch)
      for (const [keyId, counts] of keys)
        rows.push({
          key_id: keyId,
          hour: hourStamp(hour),
          requests: counts.requests,
          rejected: counts.rejected,
        })
    await addUsageCounts(db, rows)
  }

  const flushOnce = async () => {
    if (pending.size === 0) return
    const batch = pending
    pending = new Map()
    try {
      await write(batch)
    } catch (error) {
      reportError?.(error)
      // An unreachable database keeps the counts for the next flush; anything else would fail again.
      if (error instanceof UnavailableError)
        for (const [hour, keys] of batch)
          for (const [keyId, counts] of keys) add(pending, hour, keyId, counts.requests, counts.rejected)
    }
  }

  const pendingFor = (keyId: string | undefined, fromHour: number) => {
    const totals = new Map<number, UsageCounts>()
    for (const [hour, keys] of pending) {
      if (hour < fromHour) continue
      for (const [id, counts] of keys) {
        if (keyId !== undefined && id !== keyId) continue
        const sum = totals.get(hour) ?? { requests: 0, rejected: 0 }
        sum.requests += counts.requests
        sum.rejected += counts.rejected
        totals.set(hour, sum)
      }
    }
    return totals
  }

  return {
    /** Counts one request made with `keyId`; `rejected` when it was refused with 429. Memory only. */
    count(keyId: string, rejected: boolean): void {
      add(pending, Math.floor(clock() / HOUR_MS), keyId, 1, rejected ? 1 : 0)
    },

    /** Adds the counts so far to the database; concurrent calls share one flush. */
    flush(): Promise<void> {
      flushing ??= flushOnce().finally(() => {
        flushing = undefined
      })
      return flushing
    },

    /**
     * Flushes every `flushIntervalMs` until `stop()`, telling `onFlushError` of failures; the timer
     * never keeps the process alive.
     */
    start(onFlushError?: (error: unknown) => void): void {
      if (onFlushError) reportError = onFlushError
      if (timer !== undefined) return
      timer = setInterval(() => void this.flush(), interval)
      timer.unref()
    },

    /** Stops the timer and flushes what is left (on shutdown, before the database closes). */
    async stop(): Promise<void> {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
      await this.flush()
    },

    /** A key's usage per hour over the last `hours` hours (default 7 days), oldest first, gaps as zeros. */
    async hourly(keyId: string, hours = 168): Promise<HourlyUsage[]> {
      const current = Math.floor(clock() / HOUR_MS)
      const first = current - hours + 1
      const rows = await usageOfKeySince(db, keyId, hourStamp(first))
      const stored = new Map(rows.map((row) => [row.hour, row]))
      const unflushed = pendingFor(keyId, first)
      return Array.from({ length: hours }, (_, index) => {
        const hour = first + index
        const stamp = hourStamp(hour)
        const row = stored.get(stamp)
        const extra = unflushed.get(hour)
        return {
          hour: stamp,
          requests: Number(row?.requests ?? 0) + (extra?.requests ?? 0),
          rejected: Number(row?.rejected ?? 0) + (extra?.rejected ?? 0),
        }
      })
    },

    /** Every key's requests and 429s since the start of today (UTC), for the overview. */
    async today(): Promise<UsageCounts> {
      const current = clock()
      const dayStart = Math.floor(current / 86_400_000) * 24
      let { requests, rejected } = await totalUsageSince(db, hourStamp(dayStart))
      for (const counts of pendingFor(undefined, dayStart).values()) {
        requests += counts.requests
        rejected += counts.rejected
      }
      return { requests, rejected }
    },
  }
}

export type UsageService = ReturnType<typeof createUsageService>
