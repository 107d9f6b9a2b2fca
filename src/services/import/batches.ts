/** Rows per multi-row statement, and ids per `IN` list: well within every dialect's parameter limit. */
export const BATCH_SIZE = 500

/**
 * Forms, pages and redirects per statement of the writing pass. Smaller than {@link BATCH_SIZE}: a
 * batch and the records parsed for it then die in the young generation instead of filling the old
 * one with garbage (one million forms: 423 MB peak RSS at 500, 198 MB at 100, in the same time).
 */
export const KEPT_BATCH_SIZE = 100

/** `items` in consecutive slices of at most `size`. */
export function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}

/** An import of at least this many submissions rebuilds their order index once instead (SQLite). */
export const BULK_SUBMISSIONS = 50_000
