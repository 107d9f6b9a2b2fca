import { describe, expect, it } from 'vitest'
import { newId } from './ids.js'

describe('new ids', () => {
  const at = Date.UTC(2026, 10, 27, 12, 0, 0)

  it('are the prefix and 20 base62 characters, the last 16 random', () => {
    const ids = Array.from({ length: 200 }, () => newId('submission', at))
    for (const id of ids) expect(id).toMatch(/^submission_[0-9A-Za-z]{20}$/)
    expect(new Set(ids.map((id) => id.slice(-16))).size).toBe(ids.length)
  })

  it('share their first four characters within a second, and sort after those of the second before', () => {
    const first = newId('submission', at)
    expect(newId('submission', at + 999).slice(0, 15)).toBe(first.slice(0, 15))
    const next = newId('submission', at + 1000)
    expect(next.slice(0, 15) > first.slice(0, 15)).toBe(true)
    // Ids a minute apart are still near each other: only the last time characters moved.
    expect(newId('submission', at + 60_000).slice(0, 13)).toBe(first.slice(0, 13))
  })

  it('count the seconds modulo 62 to the fourth power, so the time part never grows past four characters', () => {
    const period = 62 ** 4 * 1000
    expect(newId('form', 0).slice(5, 9)).toBe('0000')
    expect(newId('form', period).slice(5, 9)).toBe('0000')
    expect(newId('form', period - 1000).slice(5, 9)).toBe('zzzz')
  })
})
