/**
 * The name among `names` that `key` is probably a typo or a snake_case spelling of, if any: the
 * `did you mean` of unknown fields and top-level keys.
 */
export function closestName(key: string, names: Iterable<string>): string | undefined {
  const loose = (name: string) => name.toLowerCase().replace(/[_-]/g, '')
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of names) {
    if (loose(candidate) === loose(key)) return candidate
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/** Levenshtein distance, cut short at 3: anything further is no suggestion. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
    }
    previous = current
  }
  return previous[b.length]
}
