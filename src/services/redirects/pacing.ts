/**
 * How much work the redirect service does between turns of the event loop: SQLite answers
 * synchronously, so a long run of statements or checks would stop the server answering meanwhile
 * (the measurements are in docs/performance.md).
 */

/** Rows per multi-row statement of an import or a flattening: each written row updates several indexes. */
export const WRITE_BATCH = 100
/** Rows checked between two turns of the event loop. */
export const ROWS_PER_TURN = 2000
