import type { DatabaseHandle } from '../../db/database.js'
import type { ContentKind } from '../../db/tables.js'
import { settledWithin } from '../../deadline.js'
import { type Claimed, type ClaimedBatch, claimDue, readClaimedBatch } from './claim.js'
import { checkContentChanged } from './content-check.js'
import { onOutboxWritten } from './outbox.js'
import { createAttemptRecorder } from './record.js'
import { createSender } from './send.js'

/**
 * The delivery worker each server process runs: it claims due deliveries with a lease
 * (`claim.ts`), sends them (`send.ts`: webhooks signed as Standard Webhooks says, emails through
 * SMTP), and records each attempt (`record.ts`). A failed attempt is retried later, with growing
 * delays, until three days after the event. It also turns content changes into `content.changed`
 * events, at most one per five seconds across all instances (`content-check.ts`).
 */

/** About 5 s, 1 min, 10 min, 1 h, then every 6 h (each ±20%). */
export const RETRY_DELAYS_MS = [5_000, 60_000, 600_000, 3_600_000, 6 * 3_600_000]
/** Failed attempts in a row after which an endpoint is shown as failing. */
export const FAILING_AFTER = 5

export interface NotifierOptions {
  /** `WEBHOOK_ALLOW_PRIVATE`: private and loopback addresses may be called. */
  allowPrivate: boolean
  /** The key the signing secrets are encrypted under. */
  secretKey: () => Buffer
  smtpUrl?: string
  mailFrom?: string
  publicUrl?: string
  /** Attempts in flight at once. */
  concurrency?: number
  /** How long one attempt may take. */
  timeoutMs?: number
  /** How long a claim holds a delivery: longer than an attempt, so a live worker never loses one. */
  leaseMs?: number
  /** How often an idle worker looks for due deliveries. */
  pollMs?: number
  /** Internal (tests): the delays between attempts. */
  retryDelaysMs?: readonly number[]
  /** How often content versions are compared, and the least time between two `content.changed`. */
  contentCheckMs?: number
  contentCoalesceMs?: number
  /** Internal (tests): the clock. */
  clock?: () => number
  log?: { warn(object: unknown, message?: string): void }
}

export function createNotifier(database: Pick<DatabaseHandle, 'db' | 'dialect'>, options: NotifierOptions) {
  const db = database.db
  const clock = options.clock ?? Date.now
  const concurrency = options.concurrency ?? 16
  const timeoutMs = options.timeoutMs ?? 10_000
  const leaseMs = options.leaseMs ?? timeoutMs + 10_000
  const pollMs = options.pollMs ?? 500
  const contentCheckMs = options.contentCheckMs ?? 1_000
  const coalesceMs = options.contentCoalesceMs ?? 5_000
  const sender = createSender(db, { ...options, concurrency, timeoutMs, clock })
  const inFlight = new Map<Promise<void>, AbortController>()
  const recorder = createAttemptRecorder(db, {
    clock,
    delays: options.retryDelaysMs ?? RETRY_DELAYS_MS,
    inFlight: () => inFlight.size,
  })
  let running = false
  let pollTimer: NodeJS.Timeout | undefined
  let contentTimer: NodeJS.Timeout | undefined
  let polling: Promise<void> | undefined
  let unsubscribe: (() => void) | undefined

  /** Sends one claimed delivery and records the attempt. */
  async function attempt(
    { delivery, lease }: Claimed,
    batch: ClaimedBatch,
    signal: AbortSignal,
  ): Promise<void> {
    const started = performance.now()
    const outcome = await sender.send(delivery, batch, signal)
    // Abandoned at shutdown: the lease runs out and another attempt (here or elsewhere) follows.
    if (signal.aborted) return
    await recorder.record(delivery, lease, outcome, Math.round(performance.now() - started))
  }

  /** Claims what is due and starts it, within the concurrency bound; returns how many started. */
  async function pump(): Promise<number> {
    const free = concurrency - inFlight.size
    if (free <= 0) return 0
    const claimed = await claimDue(database, clock(), leaseMs, free)
    if (claimed.length === 0) return 0
    const batch = await readClaimedBatch(database, claimed)
    for (const item of claimed) {
      const controller = new AbortController()
      const work: Promise<void> = attempt(item, batch, controller.signal)
        .catch((error: unknown) => options.log?.warn({ err: error }, 'could not record a delivery attempt'))
        .finally(() => {
          inFlight.delete(work)
          if (running) schedule(0)
        })
      inFlight.set(work, controller)
    }
    return claimed.length
  }

  function schedule(ms: number): void {
    if (!running) return
    if (pollTimer !== undefined) {
      if (ms > 0) return
      clearTimeout(pollTimer)
    }
    pollTimer = setTimeout(() => {
      pollTimer = undefined
      if (polling) return schedule(ms || 20)
      polling = pump()
        .then((started) => schedule(started > 0 ? 0 : pollMs))
        .catch((error: unknown) => {
          options.log?.warn({ err: error }, 'could not claim deliveries')
          schedule(pollMs * 4)
        })
        .finally(() => {
          polling = undefined
        })
    }, ms)
  }

  const service = {
    /** Claims and sends due deliveries, waits for them, and returns how many it sent (tests, tools). */
    async runOnce(): Promise<number> {
      const started = await pump()
      await Promise.all(inFlight.keys())
      return started
    },

    /** Sends until nothing is due (tests). */
    async drain(): Promise<number> {
      let total = 0
      for (;;) {
        const started = await service.runOnce()
        if (started === 0) return total
        total += started
      }
    },

    /**
     * Emits one `content.changed` naming the kinds whose version moved since the last event, when
     * any did and the last was at least the coalescing time ago (see `content-check.ts`).
     */
    checkContent: (): Promise<ContentKind[] | null> => checkContentChanged(db, clock, coalesceMs),

    start(): void {
      if (running) return
      running = true
      unsubscribe = onOutboxWritten(() => schedule(0))
      schedule(0)
      const tick = () =>
        void service
          .checkContent()
          .catch((error: unknown) => options.log?.warn({ err: error }, 'could not check content changes'))
      contentTimer = setInterval(tick, contentCheckMs)
      contentTimer.unref()
    },

    /**
     * Stops claiming, lets attempts in flight finish for up to `waitMs`, then abandons the rest:
     * their leases run out and they are attempted again, here after a restart or by another instance.
     */
    async stop(waitMs = 5_000): Promise<void> {
      running = false
      unsubscribe?.()
      if (pollTimer !== undefined) clearTimeout(pollTimer)
      if (contentTimer !== undefined) clearInterval(contentTimer)
      pollTimer = undefined
      await polling
      const all = Promise.all(inFlight.keys())
      await settledWithin(all, waitMs)
      for (const controller of inFlight.values()) controller.abort()
      await all
      await recorder.flush()
      sender.close()
    },
  }
  return service
}

export type Notifier = ReturnType<typeof createNotifier>
