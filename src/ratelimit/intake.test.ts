import { describe, expect, it } from 'vitest'
import { MemoryIntakeLimiter, MINUTE_MS } from './intake.js'

describe('the in-memory limit of public form posts', () => {
  it('takes the limit in any rolling minute and one more as soon as the oldest is a minute old', () => {
    let now = 1_000_000
    const limiter = new MemoryIntakeLimiter(3, () => now)
    for (const at of [0, 10_000, 20_000]) {
      now = 1_000_000 + at
      expect(limiter.takeSync('203.0.113.7|form_a').allowed).toBe(true)
    }
    now = 1_000_000 + 30_000
    expect(limiter.takeSync('203.0.113.7|form_a')).toEqual({ allowed: false, retryAfter: 30 })
    // The first post leaves the window a minute after it was taken, not at a clock boundary.
    now = 1_000_000 + MINUTE_MS - 1
    expect(limiter.takeSync('203.0.113.7|form_a').allowed).toBe(false)
    now = 1_000_000 + MINUTE_MS
    expect(limiter.takeSync('203.0.113.7|form_a').allowed).toBe(true)
    expect(limiter.takeSync('203.0.113.7|form_a')).toEqual({ allowed: false, retryAfter: 10 })
  })

  it('does not count refused posts, and counts each key apart', () => {
    let now = 0
    const limiter = new MemoryIntakeLimiter(2, () => now)
    const taken = Array.from({ length: 10 }, () => limiter.takeSync('a').allowed)
    expect(taken.filter(Boolean)).toHaveLength(2)
    expect(limiter.takeSync('b').allowed).toBe(true)
    // Eight refusals did not move the window: both places free up a minute after the two accepted.
    now = MINUTE_MS
    expect([
      limiter.takeSync('a').allowed,
      limiter.takeSync('a').allowed,
      limiter.takeSync('a').allowed,
    ]).toEqual([true, true, false])
  })

  it('stays exact under a high limit, across expiries of many posts at once', () => {
    let now = 0
    const limiter = new MemoryIntakeLimiter(5_000, () => now)
    for (let i = 0; i < 5_000; i++) {
      now = i
      expect(limiter.takeSync('busy').allowed).toBe(true)
    }
    expect(limiter.takeSync('busy').allowed).toBe(false)
    // At MINUTE_MS + 2_499, the posts taken at 0…2,499 have expired: 2,500 places are free.
    now = MINUTE_MS + 2_499
    let accepted = 0
    while (limiter.takeSync('busy').allowed) accepted++
    expect(accepted).toBe(2_500)
  })
})
