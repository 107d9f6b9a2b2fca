import { describe, expect, it } from 'vitest'
import type { RateLimitDecision } from './limiter.js'
import { MemoryRateLimiter } from './memory.js'

const T0 = Date.UTC(2030, 0, 1)
const HOUR = 3_600_000

/** A limiter on a clock the test moves; `at(ms)` sets the time to `ms` after T0. */
function limiterAt(limits: { perHour: number; perSecond: number }) {
  let now = T0
  const limiter = new MemoryRateLimiter(limits, () => now)
  return {
    limiter,
    at(ms: number) {
      now = T0 + ms
    },
    take: (key = 'key_a') => limiter.consumeSync(key),
  }
}

/** The charge of an allowed request, which `refund` takes back. */
function chargeOf(decision: RateLimitDecision) {
  if (!decision.charge) throw new Error('the request was not charged')
  return decision.charge
}

describe('MemoryRateLimiter', () => {
  it('allows perSecond requests in one instant and refuses the next, asking to retry in a second', () => {
    const { take } = limiterAt({ perHour: 100, perSecond: 10 })
    for (let i = 0; i < 10; i++) expect(take().allowed).toBe(true)
    const refused = take()
    expect(refused).toMatchObject({ allowed: false, retryAfter: 1 })
  })

  it('counts the burst over a rolling second, not a clock-aligned one', () => {
    const { take, at } = limiterAt({ perHour: 100, perSecond: 10 })
    at(900)
    for (let i = 0; i < 10; i++) expect(take().allowed).toBe(true)
    at(1000)
    expect(take().allowed).toBe(false)
    at(1899)
    expect(take().allowed).toBe(false)
    at(1900)
    expect(take().allowed).toBe(true)
  })

  it('frees burst slots as each allowed request ages past one second', () => {
    const { take, at } = limiterAt({ perHour: 100, perSecond: 3 })
    at(0)
    take()
    at(300)
    take()
    at(600)
    take()
    at(999)
    expect(take().allowed).toBe(false)
    at(1000)
    expect(take().allowed).toBe(true)
    expect(take().allowed).toBe(false)
    at(1300)
    expect(take().allowed).toBe(true)
  })

  it('never allows more than perSecond in any one-second interval, whatever the arrival pattern', () => {
    const { take, at } = limiterAt({ perHour: 10_000, perSecond: 5 })
    const allowed: number[] = []
    let t = 0
    for (let i = 0; i < 2000; i++) {
      t += (i * 7919) % 173
      at(t)
      if (take().allowed) allowed.push(t)
    }
    for (let i = 5; i < allowed.length; i++) expect(allowed[i] - allowed[i - 5]).toBeGreaterThanOrEqual(1000)
  })

  it('reports the hourly limit, and the remaining count after each request, never below zero', () => {
    const { take } = limiterAt({ perHour: 3, perSecond: 100 })
    const decisions = Array.from({ length: 5 }, () => take())
    expect(decisions.map((d) => d.limit)).toEqual([3, 3, 3, 3, 3])
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0])
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false])
  })

  it('starts the hourly window at the first request and ends it 3600 s later, in Unix seconds', () => {
    const { take, at } = limiterAt({ perHour: 10, perSecond: 100 })
    at(5000)
    expect(take().resetAt).toBe((T0 + 5000 + HOUR) / 1000)
    at(600_000)
    expect(take().resetAt).toBe((T0 + 5000 + HOUR) / 1000)
  })

  it('rounds a window end that falls inside a second up to the next whole second', () => {
    const { take, at } = limiterAt({ perHour: 10, perSecond: 100 })
    at(250)
    expect(take().resetAt).toBe((T0 + 1000 + HOUR) / 1000)
  })

  it('refuses an exhausted key until the hour is over, then grants a whole new hour', () => {
    const { take, at } = limiterAt({ perHour: 2, perSecond: 100 })
    take()
    take()
    at(60_000)
    expect(take()).toMatchObject({ allowed: false, remaining: 0, retryAfter: 3540 })
    at(HOUR - 1)
    expect(take()).toMatchObject({ allowed: false, retryAfter: 1 })
    at(HOUR)
    expect(take()).toMatchObject({ allowed: true, remaining: 1, resetAt: (T0 + 2 * HOUR) / 1000 })
  })

  it('charges nothing for a request refused by the burst limit', () => {
    const { take, at } = limiterAt({ perHour: 3, perSecond: 1 })
    expect(take()).toMatchObject({ allowed: true, remaining: 2 })
    for (let i = 0; i < 5; i++) expect(take()).toMatchObject({ allowed: false, remaining: 2 })
    at(1000)
    expect(take()).toMatchObject({ allowed: true, remaining: 1 })
    at(2000)
    expect(take()).toMatchObject({ allowed: true, remaining: 0 })
  })

  it('charges nothing for a request refused by the hourly limit', () => {
    const { take, at } = limiterAt({ perHour: 1, perSecond: 1 })
    take()
    at(HOUR - 500)
    expect(take().allowed).toBe(false)
    at(HOUR)
    expect(take().allowed).toBe(true)
  })

  it('does not set retryAfter on an allowed request, and sets at least 1 s on a refused one', () => {
    const { take, at } = limiterAt({ perHour: 100, perSecond: 1 })
    expect(take().retryAfter).toBeUndefined()
    at(999)
    expect(take().retryAfter).toBe(1)
  })

  it('counts each key on its own', () => {
    const { take } = limiterAt({ perHour: 2, perSecond: 100 })
    take('key_a')
    take('key_a')
    expect(take('key_a').allowed).toBe(false)
    expect(take('key_b')).toMatchObject({ allowed: true, remaining: 1 })
  })

  it('forgets a key whose window ended, without disturbing keys still in their window', () => {
    const { take, at } = limiterAt({ perHour: 2, perSecond: 100 })
    take('old')
    take('old')
    at(HOUR / 2)
    take('current')
    take('current')
    at(HOUR + 120_000)
    expect(take('old')).toMatchObject({ allowed: true, remaining: 1 })
    expect(take('current')).toMatchObject({ allowed: false, remaining: 0 })
  })

  it('is exact when many requests for one key arrive at once', async () => {
    const limiter = new MemoryRateLimiter({ perHour: 1000, perSecond: 10 }, () => T0)
    const decisions = await Promise.all(Array.from({ length: 11 }, () => limiter.consume('key')))
    expect(decisions.filter((d) => d.allowed).length).toBe(10)
    expect(decisions.map((d) => d.remaining).sort((a, b) => a - b)).toEqual([
      990, 990, 991, 992, 993, 994, 995, 996, 997, 998, 999,
    ])
  })

  it('uses the wall clock when none is given', async () => {
    const limiter = new MemoryRateLimiter({ perHour: 5, perSecond: 5 })
    const before = Date.now()
    const decision = await limiter.consume('key')
    expect(decision.allowed).toBe(true)
    expect(decision.resetAt).toBeGreaterThanOrEqual(Math.floor((before + HOUR) / 1000))
    expect(decision.resetAt).toBeLessThanOrEqual(Math.ceil((Date.now() + HOUR) / 1000))
  })

  it('starts over after close()', async () => {
    const { limiter, take } = limiterAt({ perHour: 1, perSecond: 1 })
    take()
    expect(take().allowed).toBe(false)
    await limiter.close()
    expect(take().allowed).toBe(true)
  })

  it('continues a seeded window instead of starting a fresh hour, and never lowers a count', () => {
    const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 100 })
    limiter.seed('key_a', { windowStart: T0 - 60_000, count: 7 })
    expect(take()).toMatchObject({ allowed: true, remaining: 2, resetAt: (T0 - 60_000 + HOUR) / 1000 })
    limiter.seed('key_a', { windowStart: T0 - 60_000, count: 3 })
    expect(limiter.peek('key_a')).toEqual({ windowStart: T0 - 60_000, count: 8 })
    at(HOUR)
    limiter.seed('key_b', { windowStart: T0 - 60_000, count: 9 })
    expect(take('key_b')).toMatchObject({ allowed: true, remaining: 9 })
  })

  it('keeps counting the burst across the end of the hourly window, even when the key is swept', () => {
    const { take, at } = limiterAt({ perHour: 10, perSecond: 1 })
    take()
    at(HOUR - 59_500)
    take('other')
    at(HOUR - 200)
    expect(take().allowed).toBe(true)
    // A minute since the last sweep, and the key's hour is over: the next request sweeps.
    at(HOUR + 500)
    expect(take()).toMatchObject({ allowed: false, retryAfter: 1 })
    at(HOUR + 800)
    expect(take()).toMatchObject({ allowed: true, remaining: 9 })
  })

  it("keeps only the last second's requests in a key's burst log, however high perSecond is", () => {
    const { limiter, take, at } = limiterAt({ perHour: 1_000_000_000, perSecond: 1_000_000_000 })
    for (let ms = 0; ms < 3000; ms++) {
      at(ms)
      expect(take().allowed).toBe(true)
    }
    // Those of 2000–2999 ms: the three thousand it allowed, less the two seconds that aged out.
    expect(limiter.burstLogLength('key_a')).toBe(1000)
    at(5000)
    take()
    expect(limiter.burstLogLength('key_a')).toBe(1)
  })

  it('refuses at the burst limit as before once its log has let aged requests go', () => {
    const { limiter, take, at } = limiterAt({ perHour: 1000, perSecond: 3 })
    for (const ms of [0, 400, 800, 1000, 1400]) {
      at(ms)
      expect(take().allowed).toBe(true)
    }
    // 800, 1000 and 1400 ms: the requests of 0 and 400 ms aged out as the later ones came.
    expect(limiter.burstLogLength('key_a')).toBe(3)
    at(1799)
    expect(take()).toMatchObject({ allowed: false, retryAfter: 1 })
    at(1800)
    expect(take().allowed).toBe(true)
    expect(take().allowed).toBe(false)
  })

  it('asks for the wait until the oldest burst slot frees when the clock stepped back', () => {
    const { take, at } = limiterAt({ perHour: 10, perSecond: 1 })
    at(5000)
    take()
    at(2000)
    expect(take()).toMatchObject({ allowed: false, retryAfter: 4 })
    at(5999)
    expect(take()).toMatchObject({ allowed: false, retryAfter: 1 })
    at(6000)
    expect(take().allowed).toBe(true)
  })

  it('forgets a key a second after its hour ends, sweeping at most once a minute', () => {
    const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 10 })
    take('a')
    at(30_000)
    take('c')
    expect(limiter.size).toBe(2)
    // The first sweep after 'a' ended: a second past its hour exactly.
    at(HOUR + 1000)
    take('b')
    expect(limiter.size).toBe(2)
    // 'c' ended a second ago too, but the last sweep was only 59.999 s ago.
    at(HOUR + 1000 + 59_999)
    take('b')
    expect(limiter.size).toBe(2)
    at(HOUR + 1000 + 60_000)
    take('b')
    expect(limiter.size).toBe(1)
    expect(limiter.peek('b')).toEqual({ windowStart: T0 + HOUR + 1000, count: 3 })
  })

  it('keeps a key whose hour ended less than a second ago through a sweep', () => {
    const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 10 })
    take('a')
    at(HOUR + 999)
    take('b')
    expect(limiter.size).toBe(2)
  })

  it('reports itself as the memory store, not as a fallback', () => {
    const { limiter } = limiterAt({ perHour: 1, perSecond: 1 })
    expect(limiter.status()).toEqual({ store: 'memory', fallback: false })
  })

  describe('peek', () => {
    it('knows nothing of a key that never made a request', () => {
      const { limiter } = limiterAt({ perHour: 10, perSecond: 10 })
      expect(limiter.peek('key_a')).toBeUndefined()
    })

    it('shows the window until the last millisecond of its hour, and nothing from its end on', () => {
      const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 10 })
      at(1000)
      take()
      take()
      at(HOUR + 999)
      expect(limiter.peek('key_a')).toEqual({ windowStart: T0 + 1000, count: 2 })
      at(HOUR + 1000)
      expect(limiter.peek('key_a')).toBeUndefined()
    })
  })

  describe('seed', () => {
    it('ignores a count seen in a window that ends at this very moment, even a higher one', () => {
      const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 10 })
      at(HOUR)
      take()
      limiter.seed('key_a', { windowStart: T0, count: 9 })
      expect(limiter.peek('key_a')).toEqual({ windowStart: T0 + HOUR, count: 1 })
      limiter.seed('key_b', { windowStart: T0, count: 9 })
      expect(limiter.peek('key_b')).toBeUndefined()
    })

    it('takes the seen window over a local one that ends at this very moment, even with a lower count', () => {
      const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 10 })
      take()
      take()
      take()
      at(HOUR)
      limiter.seed('key_a', { windowStart: T0 + 600_000, count: 2 })
      expect(limiter.peek('key_a')).toEqual({ windowStart: T0 + 600_000, count: 2 })
      expect(take()).toMatchObject({ allowed: true, remaining: 7, resetAt: (T0 + 600_000 + HOUR) / 1000 })
    })

    it('raises the count of the current window to a higher one seen, and keeps the earlier start', () => {
      const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 10 })
      at(60_000)
      take()
      take()
      limiter.seed('key_a', { windowStart: T0, count: 5 })
      expect(limiter.peek('key_a')).toEqual({ windowStart: T0, count: 5 })
      expect(take()).toMatchObject({ remaining: 4, resetAt: (T0 + HOUR) / 1000 })
    })

    it('keeps its own window start when the count seen is no higher', () => {
      const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 10 })
      at(60_000)
      take()
      take()
      limiter.seed('key_a', { windowStart: T0, count: 2 })
      expect(limiter.peek('key_a')).toEqual({ windowStart: T0 + 60_000, count: 2 })
    })
  })

  describe('refund', () => {
    it('takes back a charge asynchronously too', async () => {
      const { limiter, take } = limiterAt({ perHour: 2, perSecond: 10 })
      const first = chargeOf(take())
      await limiter.refund('key_a', first)
      expect(take().remaining).toBe(1)
    })

    it('ignores a charge of a key it no longer holds', async () => {
      const { limiter, take } = limiterAt({ perHour: 2, perSecond: 10 })
      const first = chargeOf(take())
      await limiter.close()
      expect(() => limiter.refundSync('key_a', first)).not.toThrow()
      expect(take().remaining).toBe(1)
    })

    it('never counts below zero when a charge is refunded twice', () => {
      const { limiter, take } = limiterAt({ perHour: 3, perSecond: 10 })
      const first = chargeOf(take())
      limiter.refundSync('key_a', first)
      limiter.refundSync('key_a', first)
      expect(limiter.peek('key_a')?.count).toBe(0)
      expect(take().remaining).toBe(2)
    })

    it('leaves the burst log alone when the refunded request has already left it', () => {
      const { limiter, take, at } = limiterAt({ perHour: 10, perSecond: 1 })
      const first = chargeOf(take())
      at(1000)
      expect(take().allowed).toBe(true)
      limiter.refundSync('key_a', first)
      expect(take().allowed).toBe(false)
    })

    it('frees exactly one place when the newest request of a log that wrapped part way is taken back', () => {
      const { limiter, take, at } = limiterAt({ perHour: 100, perSecond: 3 })
      for (const ms of [0, 10, 20]) {
        at(ms)
        take()
      }
      at(1000)
      const newest = chargeOf(take())
      limiter.refundSync('key_a', newest)
      expect(take().allowed).toBe(true)
      expect(take().allowed).toBe(false)
      at(1010)
      expect(take().allowed).toBe(true)
      expect(take().allowed).toBe(false)
    })

    it('gives back the hourly count of a request taken back', () => {
      const { limiter, take } = limiterAt({ perHour: 3, perSecond: 100 })
      take()
      const second = take()
      expect(second.remaining).toBe(1)
      limiter.refundSync('key_a', chargeOf(second))
      expect(take().remaining).toBe(1)
      expect(take()).toMatchObject({ allowed: true, remaining: 0 })
      expect(take().allowed).toBe(false)
    })

    it('frees the place of a request taken back in a full burst log, at once', () => {
      const { limiter, take, at } = limiterAt({ perHour: 100, perSecond: 3 })
      const charges = [0, 10, 20].map((ms) => {
        at(ms)
        return chargeOf(take())
      })
      at(30)
      expect(take().allowed).toBe(false)
      limiter.refundSync('key_a', charges[1])
      expect(take().allowed).toBe(true)
      expect(take().allowed).toBe(false)
      // The oldest left is still the one at 0 ms: the log frees again when it is a second old.
      at(1000)
      expect(take().allowed).toBe(true)
      expect(take().allowed).toBe(false)
    })

    it('frees a place in a burst log that wrapped around', () => {
      const { limiter, take, at } = limiterAt({ perHour: 100, perSecond: 3 })
      for (const ms of [0, 10, 20, 1000, 1010]) {
        at(ms)
        expect(take().allowed).toBe(true)
      }
      at(1020)
      const refunded = take()
      expect(refunded.allowed).toBe(true)
      at(1021)
      expect(take().allowed).toBe(false)
      limiter.refundSync('key_a', chargeOf(refunded))
      expect(take().allowed).toBe(true)
      expect(take().allowed).toBe(false)
      at(2000)
      expect(take().allowed).toBe(true)
    })

    it('leaves a later hourly window alone when the refunded request was made in an earlier one', () => {
      const { limiter, take, at } = limiterAt({ perHour: 5, perSecond: 100 })
      const old = chargeOf(take())
      at(HOUR)
      take()
      limiter.refundSync('key_a', old)
      expect(take().remaining).toBe(3)
    })

    it('charges nothing for refused requests, so there is nothing to refund', () => {
      const { take } = limiterAt({ perHour: 1, perSecond: 100 })
      expect(take().charge).toBeDefined()
      expect(take().charge).toBeUndefined()
    })
  })
})
