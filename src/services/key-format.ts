import { hash } from 'node:crypto'
import { randomBase62 } from '../ids.js'

/**
 * What an API key looks like, apart from any database: its prefix, its shape, the part shown in
 * lists, and the hash it is stored and looked up by.
 */

export const KEY_PREFIX = 'lk_live_'
const KEY_RANDOM_LENGTH = 40
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 4
/** A token that cannot be a key is refused without touching the database. */
const KEY_SHAPE = /^lk_live_[0-9A-Za-z]{32,128}$/

/** A new plain key: the prefix and 40 random base62 characters. */
export function newPlainKey(): string {
  return KEY_PREFIX + randomBase62(KEY_RANDOM_LENGTH)
}

/** Whether a token has the shape of a key: the prefix and 32 to 128 base62 characters. */
export function hasKeyShape(token: string): boolean {
  return KEY_SHAPE.test(token)
}

/** The part of a key kept in clear to tell keys apart in lists: `lk_live_` plus four characters. */
export function keyDisplayPrefix(plainKey: string): string {
  return plainKey.slice(0, DISPLAY_PREFIX_LENGTH)
}

/** SHA-256 of a key, in hex; one-shot `hash` is about a third of `createHash`'s cost on the hot path. */
export function hashApiKey(plainKey: string): string {
  return hash('sha256', plainKey, 'hex')
}

/** Whether a key's expiry has passed: it keeps its status but is refused as inactive. */
export const hasExpired = (key: { expiresAt: string | null }, now = Date.now()): boolean =>
  // Stryker disable next-line ConditionalExpression: Date.parse(null) is NaN, never at or before now, the same answer
  key.expiresAt !== null && Date.parse(key.expiresAt) <= now
