import { timingSafeEqual } from 'node:crypto'

/**
 * Whether two secrets (tokens, hashes) are the same, compared in constant time: how long it takes
 * tells nothing of where they differ, only whether their lengths do.
 */
export function secretsMatch(expected: string, given: string): boolean {
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}
