import type { LimiterStatus, RateLimitDecision, RateLimiter } from './limiter.js'

export type LimiterMode = 'shared' | 'local'

export interface FallbackOptions {
  /** Whether the shared store looks reachable; when false, requests skip it without waiting. */
  isSharedReady(): boolean
  /** Called on every switch, to log it and expose it in metrics. */
  onModeChange(mode: LimiterMode, error?: unknown): void
}

/**
 * Counts in the shared store (Redis) and, while it cannot be reached, in this process's memory,
 * so requests keep being served instead of failing. It returns to the shared store by itself as
 * soon as it answers again. While local, each instance enforces the limits on its own.
 */
export class FallbackRateLimiter implements RateLimiter {
  private mode: LimiterMode = 'shared'

  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly options: FallbackOptions,
  ) {}

  status(): LimiterStatus {
    return { store: 'redis', fallback: this.mode === 'local' }
  }

  async consume(key: string): Promise<RateLimitDecision> {
    if (this.mode === 'local' && !this.options.isSharedReady()) return this.local.consume(key)
    try {
      const decision = await this.shared.consume(key)
      this.switchTo('shared')
      return decision
    } catch (error) {
      this.switchTo('local', error)
      return this.local.consume(key)
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()])
  }

  private switchTo(mode: LimiterMode, error?: unknown): void {
    if (this.mode === mode) return
    this.mode = mode
    this.options.onModeChange(mode, error)
  }
}
