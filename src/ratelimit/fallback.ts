import {
  type Charge,
  HOUR_MS,
  type LimiterStatus,
  type RateLimitDecision,
  type RateLimiter,
} from './limiter.js'
import type { MemoryRateLimiter, WindowCount } from './memory.js'
import type { RedisRateLimiter } from './redis.js'

export type LimiterMode = 'shared' | 'local'

export interface FallbackOptions {
  /** Resolves when the shared store answers; used to decide when to go back to it. */
  probeShared(): Promise<unknown>
  /** Called on every switch, to log it and expose it in metrics. */
  onModeChange(mode: LimiterMode, error?: unknown): void
  /** How often, while local, the shared store is probed. */
  probeIntervalMs?: number
  /** How many keys' last-known windows are remembered (least recently used go first; default 10,000). */
  maxKnownKeys?: number
  clock?: () => number
}

/**
 * The last window this instance knew for each key, most recently used last. A `Map` keeps insertion
 * order, which is all a least-recently-used bound needs; one entry is ~100 bytes, so the default
 * bound holds about 1 MB.
 */
class KnownWindows {
  private readonly windows = new Map<string, WindowCount>()
  constructor(private readonly max: number) {}

  get(key: string): WindowCount | undefined {
    return this.windows.get(key)
  }

  /** Remembers `window` for `key` unless a higher count of the same live window is already known. */
  remember(key: string, window: WindowCount): void {
    const known = this.windows.get(key)
    this.windows.delete(key)
    // A higher count of the same hourly window wins: the store answering now may have lost some.
    const sameWindow = known !== undefined && known.windowStart + HOUR_MS > window.windowStart
    const keep =
      known !== undefined &&
      sameWindow &&
      known.windowStart <= window.windowStart &&
      known.count > window.count
        ? { windowStart: Math.min(known.windowStart, window.windowStart), count: known.count }
        : window
    this.windows.set(key, keep)
    if (this.windows.size > this.max) {
      const oldest = this.windows.keys().next().value
      if (oldest !== undefined) this.windows.delete(oldest)
    }
  }

  /**
   * Lowers the known count of `windowStart`'s window by one request taken back, so the floor sent
   * with the next request does not charge it again.
   */
  refunded(key: string, windowStart: number): void {
    const known = this.windows.get(key)
    if (known !== undefined && known.windowStart === windowStart && known.count > 0)
      this.windows.set(key, { windowStart, count: known.count - 1 })
  }

  entries(): IterableIterator<[string, WindowCount]> {
    return this.windows.entries()
  }
}

/**
 * Counts in the shared store (Redis) and, while it cannot be reached, in this process's memory,
 * so requests keep being served instead of failing. While local, no request waits on the shared
 * store: a background probe, at most once per interval, switches back as soon as it answers.
 * While local, each instance enforces the limits on its own.
 *
 * A failover must not hand out fresh quotas. This instance remembers the last window it saw for
 * each key (bounded, least recently used first out): falling back, it seeds memory with those
 * counts, so a key continues where Redis left it; and every request to Redis carries the highest
 * count this instance knows as a floor, so a Redis that comes back empty (restarted without
 * persistence) takes the counts back instead of starting every key at zero.
 */
export class FallbackRateLimiter implements RateLimiter {
  private mode: LimiterMode = 'shared'
  private lastProbe = 0
  private probing = false
  private readonly known: KnownWindows

  constructor(
    private readonly shared: Pick<RedisRateLimiter, 'consumeCounted' | 'refund' | 'close'>,
    private readonly local: Pick<MemoryRateLimiter, 'consume' | 'refund' | 'peek' | 'seed' | 'close'>,
    private readonly options: FallbackOptions,
  ) {
    this.known = new KnownWindows(options.maxKnownKeys ?? 10_000)
  }

  status(): LimiterStatus {
    return { store: 'redis', fallback: this.mode === 'local' }
  }

  async consume(key: string): Promise<RateLimitDecision> {
    if (this.mode === 'local') {
      this.probeInBackground()
      return this.consumeLocally(key)
    }
    try {
      const { decision, window } = await this.shared.consumeCounted(key, this.floor(key))
      this.known.remember(key, window)
      return decision
    } catch (error) {
      this.switchTo('local', error)
      return this.consumeLocally(key)
    }
  }

  /** Takes the request back from the store that counted it, whichever counts now. */
  async refund(key: string, charge: Charge): Promise<void> {
    this.known.refunded(key, charge.windowStart)
    await (charge.store === 'redis' ? this.shared.refund(key, charge) : this.local.refund(key, charge))
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()])
  }

  private async consumeLocally(key: string): Promise<RateLimitDecision> {
    const decision = await this.local.consume(key)
    const window = this.local.peek(key)
    if (window) this.known.remember(key, window)
    return decision
  }

  /** The highest count this instance knows for the key's live window, if any. */
  private floor(key: string): WindowCount | undefined {
    const known = this.known.get(key)
    const now = (this.options.clock ?? Date.now)()
    return known !== undefined && now < known.windowStart + HOUR_MS ? known : undefined
  }

  private probeInBackground(): void {
    const now = (this.options.clock ?? Date.now)()
    if (this.probing || now - this.lastProbe < (this.options.probeIntervalMs ?? 1000)) return
    this.lastProbe = now
    this.probing = true
    this.options
      .probeShared()
      .then(
        () => this.switchTo('shared'),
        () => {},
      )
      .finally(() => {
        this.probing = false
      })
  }

  private switchTo(mode: LimiterMode, error?: unknown): void {
    if (this.mode === mode) return
    if (mode === 'local') {
      for (const [key, window] of this.known.entries()) this.local.seed(key, window)
    }
    this.mode = mode
    this.options.onModeChange(mode, error)
  }
}
