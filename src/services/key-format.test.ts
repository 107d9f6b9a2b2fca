import { describe, expect, it } from 'vitest'
import {
  hasExpired,
  hashApiKey,
  hasKeyShape,
  KEY_PREFIX,
  keyDisplayPrefix,
  newPlainKey,
} from './key-format.js'

const body = (length: number) => 'aZ9'.repeat(Math.ceil(length / 3)).slice(0, length)

describe('the API key format', () => {
  it('makes keys of the prefix and 40 base62 characters, each one new', () => {
    const keys = Array.from({ length: 50 }, () => newPlainKey())
    for (const key of keys) expect(key).toMatch(/^lk_live_[0-9A-Za-z]{40}$/)
    expect(new Set(keys).size).toBe(50)
    expect(KEY_PREFIX).toBe('lk_live_')
  })

  it('accepts the shape of a key with 32 to 128 base62 characters after the prefix', () => {
    expect(hasKeyShape(`lk_live_${body(32)}`)).toBe(true)
    expect(hasKeyShape(`lk_live_${body(40)}`)).toBe(true)
    expect(hasKeyShape(`lk_live_${body(128)}`)).toBe(true)
    expect(hasKeyShape(newPlainKey())).toBe(true)
  })

  it.each([
    ['too short', `lk_live_${body(31)}`],
    ['too long', `lk_live_${body(129)}`],
    ['another prefix', `lk_test_${body(40)}`],
    ['no prefix', body(40)],
    ['text before the prefix', ` lk_live_${body(40)}`],
    ['text after the key', `lk_live_${body(40)} `],
    ['a line break after the key', `lk_live_${body(40)}\n`],
    ['a character outside base62', `lk_live_${body(39)}-`],
    ['an underscore in the body', `lk_live_${body(39)}_`],
    ['nothing at all', ''],
  ])('refuses the shape of a token with %s', (_what, token) => {
    expect(hasKeyShape(token)).toBe(false)
  })

  it('shows the prefix and the first four characters of a key, no more', () => {
    expect(keyDisplayPrefix('lk_live_AbCdEfGh')).toBe('lk_live_AbCd')
    expect(keyDisplayPrefix('lk_live_Ab')).toBe('lk_live_Ab')
  })

  it('hashes a key with SHA-256, in lowercase hex', () => {
    expect(hashApiKey('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('says a key has expired from the very moment of its expiry on', () => {
    const at = Date.parse('2030-01-31T00:00:00.000Z')
    const key = { expiresAt: '2030-01-31T00:00:00.000Z' }
    expect(hasExpired(key, at - 1)).toBe(false)
    expect(hasExpired(key, at)).toBe(true)
    expect(hasExpired(key, at + 1)).toBe(true)
  })

  it('never says a key without an expiry has expired', () => {
    expect(hasExpired({ expiresAt: null }, Number.MAX_SAFE_INTEGER)).toBe(false)
  })

  it('compares an expiry with the current time when no time is given', () => {
    expect(hasExpired({ expiresAt: new Date(Date.now() - 60_000).toISOString() })).toBe(true)
    expect(hasExpired({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() })).toBe(false)
  })
})
