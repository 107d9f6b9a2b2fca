import { Type } from '@sinclair/typebox'
import { ApiError } from '../errors.js'

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
export function listQuerySchema(filter?: BooleanFilter) {
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
  })
}

/** Parses `page`, `pageSize` and the endpoint's filter; every violation is listed in one 400. */
export function parseListQuery(query: RawQuery, filter?: BooleanFilter): ListQuery {
  const problems: string[] = []
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

  const page = integer(
    'page',
    1,
    1,
    Number.MAX_SAFE_INTEGER,
    `Parameter 'page' must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}`,
  )
  const pageSize = integer(
    'pageSize',
    DEFAULT_PAGE_SIZE,
    1,
    MAX_PAGE_SIZE,
    `Page size (parameter 'pageSize') must be between 1 and ${MAX_PAGE_SIZE}`,
  )
  let filterValue: boolean | undefined
  if (filter) {
    const raw = single(filter)
    if (raw === 'true' || raw === 'false') filterValue = raw === 'true'
    else if (raw !== undefined) problems.push(`Parameter '${filter}' must be 'true' or 'false'`)
  }
  if (problems.length > 0) throw new ApiError('invalid_parameters', problems.join('; '))
  return { page, pageSize, filter: filterValue }
}

/**
 * Parses a query string into a null-prototype object, keeping repeated names as arrays so they
 * can be refused. `URLSearchParams` never throws, whatever the encoding.
 */
export function parseQueryString(raw: string): RawQuery {
  const result: RawQuery = Object.create(null)
  for (const [name, value] of new URLSearchParams(raw)) {
    const existing = result[name]
    if (existing === undefined) result[name] = value
    else if (Array.isArray(existing)) existing.push(value)
    else result[name] = [existing, value]
  }
  return result
}

/** Builds the list envelope's `meta`. */
export function listMeta(total: number, { page, pageSize }: ListQuery) {
  return { total, page, pageSize, totalPages: Math.ceil(total / pageSize) }
}
