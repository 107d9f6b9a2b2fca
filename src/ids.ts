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

/** A new opaque id such as `form_3kTq…` (20 random base62 characters). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`
}
