import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { readTimestamp } from '../../src/resources/record-reader.js'
import { SeenIds } from '../../src/services/import/seen-ids.js'
import { parseTimestamp } from '../../src/time.js'

const digits = (value: number, width: number) => String(value).padStart(width, '0')

describe("the importer's reading of timestamps", () => {
  it('gives what parseTimestamp gives for every canonical-looking date and time, real or not', () => {
    // Fields a little past their ranges, so that days past a month's end, hour 24 and second 60 come up.
    const stamp = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 13 }),
        fc.integer({ min: 0, max: 32 }),
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 0, max: 61 }),
        fc.integer({ min: 0, max: 61 }),
      )
      .map(
        ([year, month, day, hour, minute, second]) =>
          `${digits(year, 4)}-${digits(month, 2)}-${digits(day, 2)}T${digits(hour, 2)}:${digits(minute, 2)}:${digits(second, 2)}Z`,
      )
    fc.assert(
      fc.property(stamp, (value) => readTimestamp(value) === parseTimestamp(value)),
      { numRuns: 20_000 },
    )
  })

  it('accepts leap days only in leap years, and reads other forms as parseTimestamp does', () => {
    expect(readTimestamp('2024-02-29T10:00:00Z')).toBe('2024-02-29T10:00:00Z')
    expect(readTimestamp('2000-02-29T10:00:00Z')).toBe('2000-02-29T10:00:00Z')
    expect(readTimestamp('1900-02-29T10:00:00Z')).toBeNull()
    expect(readTimestamp('2023-02-29T10:00:00Z')).toBeNull()
    for (const value of [
      '2024-01-05T12:00:00+02:00',
      '2024-01-05T10:00:00.123Z',
      '2024-01-05T10:00:00z',
      '2024-01-05 10:00:00Z',
      '2024-01-0\uff15T10:00:00Z',
      'not a date at all!!Z',
    ])
      expect(readTimestamp(value)).toBe(parseTimestamp(value))
  })
})

describe('the filter of the submission ids an import has written', () => {
  it('never takes an id it was given for a new one', () => {
    const seen = new SeenIds(10_000)
    const ids = Array.from({ length: 10_000 }, (_, i) => `submission_${i.toString(36)}`)
    for (const id of ids) seen.add(id)
    expect(ids.filter((id) => !seen.mayHave(id))).toEqual([])
  })

  it('takes few ids it was never given for ones it may have seen', () => {
    const seen = new SeenIds(10_000)
    for (let i = 0; i < 10_000; i++) seen.add(`submission_${i}`)
    let mistaken = 0
    for (let i = 10_000; i < 110_000; i++) if (seen.mayHave(`submission_${i}`)) mistaken++
    // About one in 400 by design; a broken hash would be wrong far more often.
    expect(mistaken).toBeLessThan(1000)
  })
})
