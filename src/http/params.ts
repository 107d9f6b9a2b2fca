import { type TSchema, Type } from '@sinclair/typebox'
import { DateTime } from 'luxon'
import { ApiError } from '../errors.js'
import type { SubmissionFilters } from '../schemas.js'
import { beyondIso8601, formatTimestamp } from '../time.js'

export type BooleanFilter = 'active' | 'published'

export interface ListQuery {
  page: number
  pageSize: number
  /** The endpoint's boolean filter; undefined when omitted (no filtering). */
  filter?: boolean
}

export type RawQuery = Record<string, string | string[] | undefined>

export const DEFAULT_PAGE_SIZE = 20
export const MAX_PAGE_SIZE = 100
const DIGITS = /^[0-9]+$/

/**
 * The query-string schema of a list endpoint, for the OpenAPI document. Validation itself is done by
 * `parseListQuery`, because the API's rules (plain decimal digits only, a repeated parameter is an
 * error, messages that name the parameter) are stricter than JSON-schema coercion.
 */
export function listQuerySchema(filter?: BooleanFilter, extra: Record<string, TSchema> = {}) {
  const description =
    filter === 'published'
      ? 'true: only published pages; false: only unpublished'
      : 'true: only active; false: only inactive'
  return Type.Object({
    page: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        default: 1,
        description: 'page number, from 1',
      }),
    ),
    pageSize: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_SIZE,
        default: DEFAULT_PAGE_SIZE,
        description: 'items per page',
      }),
    ),
    ...(filter
      ? {
          // Written `true` or `false` in the query string, as OpenAPI serializes a boolean.
          [filter]: Type.Optional(Type.Boolean({ description })),
        }
      : {}),
    ...extra,
  })
}

// Made once: a message built where it is passed would be joined again on every request.
const PAGE_PROBLEM = `Parameter 'page' must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}`
const PAGE_SIZE_PROBLEM = `Page size (parameter 'pageSize') must be between 1 and ${MAX_PAGE_SIZE}`

/**
 * Parses `page`, `pageSize` and the endpoint's filter; every violation, with the `problems` the
 * endpoint's own parameters had, is listed in one 400.
 */
export function parseListQuery(query: RawQuery, filter?: BooleanFilter, problems: string[] = []): ListQuery {
  const single = (name: string): string | undefined => {
    const value = query[name]
    if (Array.isArray(value)) {
      problems.push(`Parameter '${name}' must be given only once`)
      return undefined
    }
    return value
  }
  const integer = (name: string, fallback: number, min: number, max: number, message: string): number => {
    const raw = single(name)
    if (raw === undefined) return fallback
    const value = DIGITS.test(raw) ? Number(raw) : Number.NaN
    if (!(value >= min && value <= max)) {
      problems.push(message)
      return fallback
    }
    return value
  }

  const page = integer('page', 1, 1, Number.MAX_SAFE_INTEGER, PAGE_PROBLEM)
  const pageSize = integer('pageSize', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE, PAGE_SIZE_PROBLEM)
  let filterValue: boolean | undefined
  if (filter) {
    const raw = single(filter)
    if (raw === 'true' || raw === 'false') filterValue = raw === 'true'
    else if (raw !== undefined) problems.push(`Parameter '${filter}' must be 'true' or 'false'`)
  }
  if (problems.length > 0) throw new ApiError('invalid_parameters', problems.join('; '))
  return { page, pageSize, filter: filterValue }
}

/** What `URLSearchParams` would change in a query: a `+`, a percent-encoding, a character outside printable ASCII. */
const NEEDS_DECODING = /[+%]|[^\x20-\x7e]/

/**
 * Parses a query string into a null-prototype object, keeping repeated names as arrays so they
 * can be refused. `URLSearchParams` never throws, whatever the encoding. A query it would not
 * change (`page=1&pageSize=20`, nearly every one) is split as it is: the same pairs, without its
 * iterator's arrays and copies on every request.
 */
export function parseQueryString(raw: string): RawQuery {
  const result: RawQuery = Object.create(null)
  if (NEEDS_DECODING.test(raw)) {
    for (const [name, value] of new URLSearchParams(raw)) add(result, name, value)
    return result
  }
  let start = 0
  while (start <= raw.length) {
    let end = raw.indexOf('&', start)
    if (end === -1) end = raw.length
    // As in URLSearchParams, an empty pair is skipped and a pair without `=` has an empty value.
    if (end > start) {
      const equals = raw.indexOf('=', start)
      if (equals === -1 || equals > end) add(result, raw.slice(start, end), '')
      else add(result, raw.slice(start, equals), raw.slice(equals + 1, end))
    }
    start = end + 1
  }
  return result
}

function add(query: RawQuery, name: string, value: string): void {
  const existing = query[name]
  if (existing === undefined) query[name] = value
  else if (Array.isArray(existing)) existing.push(value)
  else query[name] = [existing, value]
}

/** Builds the list envelope's `meta`. */
export function listMeta(total: number, { page, pageSize }: ListQuery) {
  return { total, page, pageSize, totalPages: Math.ceil(total / pageSize) }
}

/** The value of a parameter given once, or a problem saying it was repeated. */
function singleValue(query: RawQuery, name: string, problems: string[]): string | undefined {
  const value = query[name]
  if (Array.isArray(value)) {
    problems.push(`Parameter '${name}' must be given only once`)
    return undefined
  }
  return value
}

/** Longer than any ISO 8601 date-time: refused without parsing. */
const MAX_TIMESTAMP_LENGTH = 64

/**
 * An offset's `+` sent unencoded in a URL arrives as a space (`…T11:00:00 01:00`): nothing else can
 * stand there, so it is read as the `+` it was.
 */
const UNENCODED_PLUS = / (\d{2}(?::?\d{2})?)$/

/**
 * An ISO 8601 date-time (with `Z` or an offset, or without one read as UTC) as a canonical
 * timestamp, rounded *up* to the second: stored times have whole seconds, so `createdAt ≥ t` and
 * `createdAt < t` select the same rows for `t` and for the next whole second. Null when it is not one.
 */
export function parseWindowBound(given: string): string | null {
  const value = given.replace(UNENCODED_PLUS, '+$1')
  // A date-time, not a bare date or a week or ordinal date: the window is a point in time.
  if (value.length > MAX_TIMESTAMP_LENGTH || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return null
  if (beyondIso8601(value)) return null
  const parsed = DateTime.fromISO(value, { zone: 'utc' })
  if (!parsed.isValid) return null
  const ms = Math.ceil(parsed.toMillis() / 1000) * 1000
  const date = new Date(ms)
  const year = date.getUTCFullYear()
  if (year < 1 || year > 9999) return null
  return formatTimestamp(date)
}

/** The query parameters of the submissions filters, for the OpenAPI document. */
export const SUBMISSION_FILTER_PROPERTIES = {
  since: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        'only submissions created at or after this time: an ISO 8601 date-time with `Z` or an offset (without one it is read as UTC)',
      examples: ['2024-01-05T10:00:00Z'],
    }),
  ),
  until: Type.Optional(
    Type.String({
      format: 'date-time',
      description:
        "only submissions created before this time (exclusive), written like `since`; a sync job passes its previous run's `until` as `since`",
      examples: ['2024-01-06T10:00:00Z'],
    }),
  ),
  isRead: Type.Optional(Type.Boolean({ description: 'true: only read submissions; false: only unread' })),
  isStarred: Type.Optional(
    Type.Boolean({ description: 'true: only starred submissions; false: only unstarred' }),
  ),
}

/** Parses the submissions filters; what is wrong is added to `problems`, each naming its parameter. */
export function parseSubmissionFilters(query: RawQuery, problems: string[]): SubmissionFilters {
  const filters: SubmissionFilters = {}
  for (const name of ['since', 'until'] as const) {
    const raw = singleValue(query, name, problems)
    if (raw === undefined) continue
    const bound = parseWindowBound(raw)
    if (bound === null)
      problems.push(
        `Parameter '${name}' must be an ISO 8601 date-time, e.g. 2024-01-05T10:00:00Z or 2024-01-05T11:00:00+01:00`,
      )
    else filters[name] = bound
  }
  for (const name of ['isRead', 'isStarred'] as const) {
    const raw = singleValue(query, name, problems)
    if (raw === 'true' || raw === 'false') filters[name] = raw === 'true'
    else if (raw !== undefined) problems.push(`Parameter '${name}' must be 'true' or 'false'`)
  }
  return filters
}
