/**
 * Forms, pages and redirects per statement of the writing pass. Smaller than `BATCH_SIZE`
 * (`db/batches.ts`): a batch and the records parsed for it then die in the young generation instead
 * of filling the old one with garbage (one million forms: 423 MB peak RSS at 500, 198 MB at 100, in
 * the same time).
 */
export const KEPT_BATCH_SIZE = 100

/** An import of at least this many submissions rebuilds their order index once instead (SQLite). */
export const BULK_SUBMISSIONS = 50_000
