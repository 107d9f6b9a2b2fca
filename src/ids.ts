import { randomBytes } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/**
 * `length` characters drawn uniformly from base62 using the CSPRNG. Bytes ≥ 248 are rejected
 * rather than folded with `%`, which would make the first eight characters more likely.
 */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    const byte = nextRandomByte()
    if (byte < 248) out += BASE62[byte % 62]
  }
  return out
}

// Random bytes are drawn in blocks: one `randomBytes` call per id costs seconds over a million-row
// import. Each byte is used once and the pool lives only in this process's memory.
const POOL_SIZE = 4096
let pool = Buffer.alloc(0)
let poolOffset = 0

function nextRandomByte(): number {
  if (poolOffset >= pool.length) {
    pool = randomBytes(POOL_SIZE)
    poolOffset = 0
  }
  return pool[poolOffset++]
}

export type IdPrefix = 'form' | 'submission' | 'page' | 'redirect' | 'user' | 'key'

/** How many base62 characters of a new id tell when it was made; the other 16 are random. */
const TIME_CHARACTERS = 4
const TIME_PERIOD_S = 62 ** TIME_CHARACTERS

/**
 * A new opaque id such as `submission_0Fz9kTq…`: 20 base62 characters, the first 4 the current
 * second (counted modulo 62⁴, about 171 days) and 16 random. Ids made close together share their
 * first characters, so a new row's primary key lands beside the last ones in the index, on a page
 * in memory, instead of on a random page of it: on SQLite that cut a post's insert by a tenth.
 */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  let seconds = Math.floor(now / 1000) % TIME_PERIOD_S
  let time = ''
  for (let i = 0; i < TIME_CHARACTERS; i++) {
    time = BASE62[seconds % 62] + time
    seconds = Math.floor(seconds / 62)
  }
  return `${prefix}_${time}${randomBase62(20 - TIME_CHARACTERS)}`
}

/** The most characters an id may have: ids are keys of every index, and parts of URLs. */
export const MAX_ID_LENGTH = 128

/**
 * The id alphabet: letters, digits, `_`, `.`, `:` and `-`, 1–{@link MAX_ID_LENGTH} characters, and
 * not `.` or `..`. An id in it can be put in a URL path segment, an HTML attribute or a `Location`
 * header as it is, and can never name another route (no `/`, `?`, `#`, `%` or dot segment).
 * Generated ids (`form_3kTq…`) are in it; imported ones are refused unless they are.
 */
export const ID_PATTERN = '^(?!\\.\\.?$)[A-Za-z0-9_.:-]{1,128}$'
const SAFE_ID = new RegExp(ID_PATTERN)

/** The alphabet as people read it, for messages and documentation. */
export const ID_ALPHABET = 'letters A–Z and a–z, digits, and _ . : -'

/** Whether `value` is an id of the documented alphabet (see {@link ID_PATTERN}). */
export function isSafeId(value: unknown): value is string {
  return typeof value === 'string' && SAFE_ID.test(value)
}

/**
 * Why `value` is not an id, or null: a predicate to follow the field's name, such as
 * `must be at most 128 characters (got 300)`.
 */
export function idProblem(value: string): string | null {
  if (value.length === 0) return 'must not be empty'
  if (value.length > MAX_ID_LENGTH) return `must be at most ${MAX_ID_LENGTH} characters (got ${value.length})`
  if (value === '.' || value === '..') return `must not be '${value}'`
  if (!SAFE_ID.test(value)) return `may hold only ${ID_ALPHABET} (got ${JSON.stringify(value)})`
  return null
}
