import type { Kysely } from 'kysely'
import {
  type DeliveryAttempt,
  type DeliveryStatus,
  failPendingDeliveriesTo,
  recordDeliveryAttempts,
} from '../../db/repositories/notification-deliveries.js'
import {
  disableEndpoint,
  recordEndpointFailures,
  recordEndpointSuccess,
} from '../../db/repositories/webhook-endpoints.js'
import type { Database, NotificationDeliveriesTable } from '../../db/tables.js'
import { formatTimestamp } from '../../time.js'
import type { Outcome } from './outcome.js'

/** An attempt made, waiting to be written. */
interface Made {
  delivery: NotificationDeliveriesTable
  lease: string
  outcome: Outcome
  ms: number
  at: number
}

const ts = (ms: number) => formatTimestamp(new Date(ms))

/**
 * What an attempt leaves on its delivery: delivered, failed for good (410 Gone, never worth
 * retrying, or past its expiry), or pending again after the next delay (±20%) of `delays`.
 */
export function attemptResult(made: Made, delays: readonly number[]): DeliveryAttempt {
  const { delivery, lease, outcome, ms, at } = made
  const now = ts(at)
  const attempts = delivery.attempts + 1
  let status: DeliveryStatus = 'pending'
  let next = delivery.next_attempt_at
  if (outcome.ok) status = 'delivered'
  else if (outcome.gone || outcome.final) status = 'failed'
  else {
    const base = delays[Math.min(attempts - 1, delays.length - 1)]
    next = ts(at + Math.round(base * (0.8 + Math.random() * 0.4)))
    if (next > delivery.expires_at) status = 'failed'
  }
  return {
    id: delivery.id,
    lease,
    status,
    attempts,
    lastStatus: outcome.lastStatus,
    responseCode: outcome.responseCode,
    durationMs: ms,
    lastError: outcome.error?.slice(0, 1000) ?? null,
    nextAttemptAt: next,
    deliveredAt: outcome.ok ? now : null,
    updatedAt: now,
  }
}

/**
 * Writes a batch of attempts in one transaction: the deliveries, each endpoint's successes and
 * failures in a row, and the endpoints that answered 410 Gone, disabled with what they still had
 * queued failed.
 */
async function writeAttempts(db: Kysely<Database>, batch: readonly Made[], delays: readonly number[]) {
  await db.transaction().execute(async (trx) => {
    const succeeded = new Set<string>()
    const failures = new Map<string, number>()
    const gone = new Set<string>()
    let last = ''
    const results: DeliveryAttempt[] = []
    for (const made of batch) {
      const result = attemptResult(made, delays)
      results.push(result)
      last = result.updatedAt > last ? result.updatedAt : last
      const endpoint = made.delivery.endpoint_id
      if (endpoint === null || made.outcome.final) continue
      if (made.outcome.ok) succeeded.add(endpoint)
      else failures.set(endpoint, (failures.get(endpoint) ?? 0) + 1)
      if (made.outcome.gone) gone.add(endpoint)
    }
    await recordDeliveryAttempts(trx, results)
    for (const endpoint of succeeded)
      if (!failures.has(endpoint)) await recordEndpointSuccess(trx, endpoint, last)
    for (const [endpoint, count] of failures)
      await recordEndpointFailures(trx, endpoint, count, succeeded.has(endpoint), last)
    for (const endpoint of gone) {
      // 410 Gone: the receiver asks for no more. The endpoint stops; what it still had queued fails.
      await disableEndpoint(trx, endpoint)
      await failPendingDeliveriesTo(trx, endpoint, last)
    }
  })
}

/**
 * Records attempts in small batches, one transaction each: one commit per delivery would cost
 * SQLite's single writer (and so the API's own writes) more than the deliveries themselves. A batch
 * is written once 32 attempts wait, once every attempt in flight has one waiting (`inFlight()`), or
 * 20 ms after the first.
 */
export function createAttemptRecorder(
  db: Kysely<Database>,
  options: { clock: () => number; delays: readonly number[]; inFlight: () => number },
) {
  let pending: Made[] = []
  let flushing: Promise<void> | undefined
  let flushTimer: NodeJS.Timeout | undefined
  let flushed: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | undefined

  async function flush(): Promise<void> {
    if (flushTimer !== undefined) clearTimeout(flushTimer)
    flushTimer = undefined
    await flushing
    if (pending.length === 0 || !flushed) return
    const batch = pending
    const done = flushed
    pending = []
    flushed = undefined
    flushing = writeAttempts(db, batch, options.delays).then(done.resolve, done.reject)
    await flushing
    flushing = undefined
  }

  return {
    /** Records one attempt; resolves once the batch it joined is written. */
    record(
      delivery: NotificationDeliveriesTable,
      lease: string,
      outcome: Outcome,
      ms: number,
    ): Promise<void> {
      pending.push({ delivery, lease, outcome, ms, at: options.clock() })
      if (!flushed) {
        let resolve = () => {}
        let reject: (error: unknown) => void = () => {}
        const promise = new Promise<void>((yes, no) => {
          resolve = yes
          reject = no
        })
        flushed = { promise, resolve, reject }
      }
      const waiting = flushed.promise
      if (pending.length >= 32 || options.inFlight() <= pending.length) void flush()
      else flushTimer ??= setTimeout(() => void flush(), 20)
      return waiting
    },
    /** Writes what waits now (at shutdown). */
    flush,
  }
}
