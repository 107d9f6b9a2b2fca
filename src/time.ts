import { DateTime } from 'luxon'

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/

/** A date as the API shows it: UTC, second precision, `Z` suffix (`2024-01-05T10:00:00Z`). */
export function formatTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`
}

export function now(): string {
  return formatTimestamp(new Date())
}

/** A UTC offset at the end of a time: `+01:00`, `-0530`, `+01`. */
const OFFSET = /[+-](\d{2})(?::?(\d{2}))?$/

/**
 * Whether luxon would read `value` although ISO 8601 does not: a zone name in brackets
 * (`…[Europe/Paris]`, luxon's own extension) or an offset beyond ±23:59 (`+25:00`, read as a
 * day and an hour). Neither is a date-time anyone means to send, so both are refused.
 */
export function beyondIso8601(value: string): boolean {
  if (value.includes('[')) return true
  const time = value.slice(value.search(/[Tt]/) + 1)
  const offset = value.search(/[Tt]/) === -1 ? null : OFFSET.exec(time)
  return offset !== null && (Number(offset[1]) > 23 || Number(offset[2] ?? 0) > 59)
}

/**
 * Reads any ISO 8601 date-time and returns it in canonical form, or `null` when it is not one.
 * An offset is converted to UTC; a time without offset is read as UTC; fractions of a second are
 * dropped. The canonical form, by far the most common in imports, skips the general parser.
 */
export function parseTimestamp(value: string): string | null {
  if (CANONICAL.test(value)) {
    const ms = Date.parse(value)
    return Number.isNaN(ms) || formatTimestamp(new Date(ms)) !== value ? null : value
  }
  if (beyondIso8601(value)) return null
  const parsed = DateTime.fromISO(value, { zone: 'utc' })
  if (!parsed.isValid) return null
  const year = parsed.toUTC().year
  if (year < 1 || year > 9999) return null
  return formatTimestamp(parsed.toJSDate())
}
