import { randomBytes } from 'node:crypto'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/**
 * `length` characters drawn uniformly from base62 using the CSPRNG. Bytes ≥ 248 are rejected
 * rather than folded with `%`, which would make the first eight characters more likely.
 */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62]
      if (out.length === length) break
    }
  }
  return out
}

export type IdPrefix = 'form' | 'submission' | 'page' | 'redirect' | 'user' | 'key'

/** A new opaque id such as `form_3kTq…` (20 random base62 characters). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`
}
