/**
 * The one table of input limits. Every entry point that takes text (the importer, the dashboard's
 * forms, the redirects CSV upload, the CLI) checks against these numbers, so that no field can grow
 * without bound: a 200 MB title would otherwise be served on every list request. Lengths count
 * UTF-16 code units, as JavaScript and the HTML `maxlength` attribute do. The README's "Field
 * limits" table repeats them; the API's response schemas deliberately do not (limits are for input).
 */
export const FIELD_LIMITS = {
  /** Every id (forms, submissions, pages, redirects, users, keys); see `ids.ts` for its alphabet. */
  id: 128,
  formTitle: 200,
  formDescription: 5_000,
  pageTitle: 200,
  slug: 200,
  /** Page paths and both paths of a redirect. */
  path: 2_048,
  pageType: 100,
  notes: 10_000,
  ipAddress: 100,
  userAgent: 1_000,
  referrer: 2_048,
  submittedBy: 320,
  /** ISO 8601 timestamps as written in an import; the longest sensible one is ~35 characters. */
  timestamp: 64,
  keyName: 100,
  /** RFC 5321's limit on a forward path. */
  email: 254,
} as const

/** A submission's `data` object. */
export const DATA_LIMITS = {
  /** UTF-8 bytes of `data` serialized as JSON. */
  bytes: 64 * 1024,
  /** Objects and arrays nested inside `data` (the object itself is depth 1). */
  depth: 20,
  /** Object keys and array items of `data`, counted at every depth. */
  entries: 1_000,
} as const

/**
 * The longest NDJSON line the importer reads; a longer one is refused with its line number and never
 * held in memory. The largest valid record (a submission at every limit above, every character
 * written as a six-byte `\uXXXX` escape) is under half of this.
 */
export const MAX_RECORD_BYTES = 1024 * 1024

/** The name of a field limit. */
export type FieldLimit = keyof typeof FIELD_LIMITS

/**
 * Why `text` cannot be stored, or null: longer than `max`, holding a NUL character (PostgreSQL's
 * text cannot hold one, and SQLite would cut some tools short at it), or a lone UTF-16 surrogate
 * (not Unicode text at all; it cannot be encoded as UTF-8). A predicate such as `must be at most 200
 * characters (got 250)`, to follow the field's name.
 */
export function textProblem(text: string, max: number): string | null {
  if (text.length > max) return `must be at most ${max} characters (got ${text.length})`
  return characterProblem(text)
}

declare global {
  interface String {
    /** Node 20 has it; TypeScript's `lib` lists it from ES2024 on. */
    isWellFormed(): boolean
  }
}

/** Why `text` holds characters no stored text may hold (NUL, a lone surrogate), or null. */
export function characterProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL (\\u0000) characters'
  if (!text.isWellFormed()) return 'must not contain lone UTF-16 surrogates (not valid Unicode text)'
  return null
}
