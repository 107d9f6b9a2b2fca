/**
 * The one error type of the HTTP API. Every failure a client can see is an `ApiError`; the error
 * handler in `http/errors.ts` is the only place that turns it into the `{ error, message }` envelope.
 */
export const ERROR_TYPES = {
  missing_authorization_header: { status: 401, phrase: 'Missing authorization header' },
  invalid_authorization_format: { status: 401, phrase: 'Invalid authorization format' },
  invalid_api_key: { status: 401, phrase: 'Invalid API key' },
  api_key_inactive: { status: 401, phrase: 'API key inactive' },
  insufficient_permissions: { status: 403, phrase: 'Insufficient permissions' },
  resource_not_found: { status: 404, phrase: 'Resource not found' },
  invalid_parameters: { status: 400, phrase: 'Invalid parameters' },
  bad_request: { status: 400, phrase: 'Bad request' },
  method_not_allowed: { status: 405, phrase: 'Method not allowed' },
  request_timeout: { status: 408, phrase: 'Request timeout' },
  uri_too_long: { status: 414, phrase: 'URI too long' },
  request_header_fields_too_large: { status: 431, phrase: 'Request header fields too large' },
  rate_limit_exceeded: { status: 429, phrase: 'Rate limit exceeded' },
  internal_error: { status: 500, phrase: 'Internal server error' },
  service_unavailable: { status: 503, phrase: 'Service unavailable' },
} as const satisfies Record<string, { status: number; phrase: string }>

export type ErrorType = keyof typeof ERROR_TYPES

export type ErrorStyle = 'code' | 'phrase'

export class ApiError extends Error {
  readonly status: number
  /** Extra response headers that belong to this failure (`WWW-Authenticate`, `Retry-After`, `Allow`). */
  readonly headers: Record<string, string>

  constructor(
    readonly type: ErrorType,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
    this.status = ERROR_TYPES[type].status
    this.headers = headers
  }
}

/** The `error` field for a type in the configured style. */
export function errorLabel(type: ErrorType, style: ErrorStyle): string {
  return style === 'phrase' ? ERROR_TYPES[type].phrase : type
}

/**
 * What a failure of the services means to whoever asked, whichever face they asked through. Each
 * face answers every kind from one table typed `Record<ErrorKind, …>`, so a kind added here does not
 * compile until every face says what it means.
 */
export const ERROR_KINDS = ['invalid', 'not_found', 'unavailable'] as const
export type ErrorKind = (typeof ERROR_KINDS)[number]

/** The one error type of the services; its `kind` is all a face needs to answer it. */
export abstract class DomainError extends Error {
  abstract readonly kind: ErrorKind
}

/**
 * A failure of a service call that the caller can fix (bad input, last admin…). Faces print it (CLI)
 * or show it (dashboard); it never becomes a 500.
 */
export class ValidationError extends DomainError {
  readonly kind = 'invalid'

  constructor(
    message: string,
    readonly problems: string[] = [message],
    /** The input it is about, when it is one: a face with a form says it beside that field. */
    readonly field?: string,
  ) {
    super(message)
    this.name = 'ValidationError'
  }

  /** A problem with one input (`field`, as the service's caller names it). */
  static about(field: string, message: string): ValidationError {
    return new ValidationError(message, [message], field)
  }
}

/**
 * The first `limit` of `items`, then `…and N more <noun>s` when there were more: how every list of
 * problems (imports, CSV uploads) stays readable however long it gets. `total` counts items that
 * were found but not kept (defaults to `items.length`).
 */
export function firstAndRemainder(
  items: readonly string[],
  limit: number,
  noun: string,
  total: number = items.length,
): string[] {
  const listed = items.slice(0, limit)
  const unlisted = total - listed.length
  return unlisted > 0 ? [...listed, `…and ${unlisted} more ${plural(unlisted, noun)}`] : listed
}

/** `word`, or `words` unless `count` is 1. */
export function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`
}

/** A service call named something that does not exist (a user, a key, a form). */
export class NotFoundError extends DomainError {
  readonly kind = 'not_found'

  constructor(message: string) {
    super(message)
    this.name = 'NotFoundError'
  }
}

/** Seconds a client should wait after an `UnavailableError` (a 503) before trying again. */
export const UNAVAILABLE_RETRY_AFTER_S = 5

/** The database (or another backing service) cannot be reached; callers answer 503 and retry later. */
export class UnavailableError extends DomainError {
  readonly kind = 'unavailable'

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'UnavailableError'
  }
}
