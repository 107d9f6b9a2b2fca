import type { LimiterStatus, RateLimitDecision, RateLimiter } from './limiter.js'

export type LimiterMode = 'shared' | 'local'

export interface FallbackOptions {
  /** Resolves when the shared store answers; used to decide when to go back to it. */
  probeShared(): Promise<unknown>
  /** Called on every switch, to log it and expose it in metrics. */
  onModeChange(mode: LimiterMode, error?: unknown): void
  /** How often, while local, the shared store is probed. */
  probeIntervalMs?: number
  clock?: () => number
}

/**
 * Counts in the shared store (Redis) and, while it cannot be reached, in this process's memory,
 * so requests keep being served instead of failing. While local, no request waits on the shared
 * store: a background probe, at most once per interval, switches back as soon as it answers.
 * While local, each instance enforces the limits on its own.
 */
export class FallbackRateLimiter implements RateLimiter {
  private mode: LimiterMode = 'shared'
  private lastProbe = 0
  private probing = false

  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly options: FallbackOptions,
  ) {}

  status(): LimiterStatus {
    return { store: 'redis', fallback: this.mode === 'local' }
  }

  async consume(key: string): Promise<RateLimitDecision> {
    if (this.mode === 'local') {
      this.probeInBackground()
      return this.local.consume(key)
    }
    try {
      return await this.shared.consume(key)
    } catch (error) {
      this.switchTo('local', error)
      return this.local.consume(key)
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()])
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
    this.mode = mode
    this.options.onModeChange(mode, error)
  }
}
