import { describe, expect, it } from 'vitest'
import { beyondIso8601, parseTimestamp } from './time.js'

describe('parseTimestamp', () => {
  it.each([
    ['2024-01-05T10:00:00Z', '2024-01-05T10:00:00Z'],
    ['2024-01-05T11:00:00+01:00', '2024-01-05T10:00:00Z'],
    ['2024-01-05T04:30:00-0530', '2024-01-05T10:00:00Z'],
    ['2024-01-05T23:00:00+23:00', '2024-01-05T00:00:00Z'],
    ['2024-01-05T10:00:00', '2024-01-05T10:00:00Z'],
    ['2024-01-05', '2024-01-05T00:00:00Z'],
  ])('reads %s as %s', (given, canonical) => {
    expect(parseTimestamp(given)).toBe(canonical)
  })

  it.each([
    ['an offset past 23 hours', '2024-01-05T10:00:00+25:00'],
    ['an offset with 60 minutes', '2024-01-05T10:00:00-01:60'],
    ['an offset of 99:99', '2024-01-05T10:00:00+99:99'],
    ['a zone name in brackets', '2024-01-05T10:00:00[Europe/Paris]'],
    ['an offset and a zone name', '2024-01-05T10:00:00+01:00[Europe/Paris]'],
  ])('refuses %s, which ISO 8601 does not allow', (_, given) => {
    expect(beyondIso8601(given)).toBe(true)
    expect(parseTimestamp(given)).toBeNull()
  })

  it('does not take the day of a bare date for an offset', () => {
    expect(beyondIso8601('2024-01-31')).toBe(false)
    expect(parseTimestamp('2024-01-31')).toBe('2024-01-31T00:00:00Z')
  })
})
