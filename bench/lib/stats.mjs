// Small statistics for the benchmark's reports and scripts: medians and 95% intervals of repeated
// measurements on a shared machine, where a verdict is only worth what its interval allows.

/** The median of `values`; null when there are none. */
export function median(values) {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/**
 * A 95% interval for the median of `values`, from their order statistics alone (the sign test's
 * interval): the k-th smallest and k-th largest value, k the largest rank with P(Binomial(n, ½) < k)
 * ≤ 2.5%. It assumes nothing about how the pairs' ratios spread, and needs at least 6 values
 * (null otherwise). A target inside it is within what the run can tell apart from noise.
 */
export function medianInterval(values) {
  const n = values.length
  if (n < 6) return null
  let below = 0.5 ** n // P(B = 0), then P(B < k) summed as k grows
  let k = 0
  let term = below
  while (below <= 0.025) {
    k++
    term = (term * (n - k + 1)) / k
    below += term
  }
  const sorted = [...values].sort((a, b) => a - b)
  return { low: sorted[k - 1], high: sorted[n - k] }
}

/** The mean of `values` and the half-width of its 95% interval (normal approximation). */
export function meanInterval(values) {
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / Math.max(1, values.length - 1)
  return { mean, halfWidth: (1.96 * Math.sqrt(variance)) / Math.sqrt(values.length) }
}
