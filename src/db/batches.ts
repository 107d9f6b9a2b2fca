/** Rows per multi-row statement, and ids per `IN` list: well within every dialect's parameter limit. */
export const BATCH_SIZE = 500

/** `items` in consecutive slices of at most `size`. */
export function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}
