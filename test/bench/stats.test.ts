import { describe, expect, it } from 'vitest'
// @ts-expect-error: the benchmark is plain JavaScript, without declarations.
import * as stats from '../../bench/lib/stats.mjs'

// The benchmark's verdicts and its post-cost figures rest on these: a wrong rank or variance would
// call noise a result, or a result noise.

describe('bench statistics', () => {
  it('takes the median of an odd count as its middle value and of an even count as the mean of the two', () => {
    expect(stats.median([3, 1, 2])).toBe(2)
    expect(stats.median([4, 1, 3, 2])).toBe(2.5)
    expect(stats.median([])).toBeNull()
  })

  it('gives the median a 95% interval from the order statistics: ranks 10 and 22 of 31 values', () => {
    const values = Array.from({ length: 31 }, (_, i) => (31 - i) / 100)
    expect(stats.medianInterval(values)).toEqual({ low: 0.1, high: 0.22 })
    expect(stats.medianInterval(Array.from({ length: 10 }, (_, i) => i + 1))).toEqual({ low: 2, high: 9 })
  })

  it('gives ranks 49 and 72 of 120 values, the pairs of a full run of reads under writes', () => {
    // P(Binomial(120, ½) ≤ 48) ≈ 1.8% is within 2.5%; P(… ≤ 49) ≈ 2.7% is not.
    const values = Array.from({ length: 120 }, (_, i) => 120 - i)
    expect(stats.medianInterval(values)).toEqual({ low: 49, high: 72 })
  })

  it('gives no median interval for fewer than six values, where even the extremes cover less than 95%', () => {
    expect(stats.medianInterval([1, 2, 3, 4, 5])).toBeNull()
    expect(stats.medianInterval([1, 2, 3, 4, 5, 6])).toEqual({ low: 1, high: 6 })
  })

  it('gives the mean with the half-width of its 95% interval from the sample standard deviation', () => {
    // Mean 5, sample variance 32/7 over 8 values: 1.96 × √(32/7) / √8.
    const { mean, halfWidth } = stats.meanInterval([2, 4, 4, 4, 5, 5, 7, 9])
    expect(mean).toBe(5)
    expect(halfWidth).toBeCloseTo((1.96 * Math.sqrt(32 / 7)) / Math.sqrt(8), 12)
    expect(stats.meanInterval([3, 3, 3])).toEqual({ mean: 3, halfWidth: 0 })
  })
})
