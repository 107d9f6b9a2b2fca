import { describe, expect, it } from 'vitest'
import { secretsMatch } from './constant-time.js'

describe('secretsMatch', () => {
  it('holds for the same secret only, whatever the lengths', () => {
    expect(secretsMatch('a1b2c3', 'a1b2c3')).toBe(true)
    expect(secretsMatch('a1b2c3', 'a1b2c4')).toBe(false)
    expect(secretsMatch('a1b2c3', 'a1b2c')).toBe(false)
    expect(secretsMatch('a1b2c3', '')).toBe(false)
    // Lengths in bytes, not characters: as many characters in more bytes is a mismatch, not a throw.
    expect(secretsMatch('a', 'é')).toBe(false)
    expect(secretsMatch('ab', 'é')).toBe(false)
    expect(secretsMatch('é', 'é')).toBe(true)
  })
})
