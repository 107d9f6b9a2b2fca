/**
 * The error types of the Lectern API, with their HTTP status and the phrase a server started with
 * `ERROR_STYLE=phrase` sends instead of the code. The client always reports the code.
 */
export const ERROR_TYPES = {
  invalid_parameters: { status: 400, phrase: 'Invalid parameters' },
  bad_request: { status: 400, phrase: 'Bad request' },
  missing_authorization_header: { status: 401, phrase: 'Missing authorization header' },
  invalid_authorization_format: { status: 401, phrase: 'Invalid authorization format' },
  invalid_api_key: { status: 401, phrase: 'Invalid API key' },
  api_key_inactive: { status: 401, phrase: 'API key inactive' },
  insufficient_permissions: { status: 403, phrase: 'Insufficient permissions' },
  resource_not_found: { status: 404, phrase: 'Resource not found' },
  method_not_allowed: { status: 405, phrase: 'Method not allowed' },
  request_timeout: { status: 408, phrase: 'Request timeout' },
  uri_too_long: { status: 414, phrase: 'URI too long' },
  rate_limit_exceeded: { status: 429, phrase: 'Rate limit exceeded' },
  request_header_fields_too_large: { status: 431, phrase: 'Request header fields too large' },
  internal_error: { status: 500, phrase: 'Internal server error' },
  service_unavailable: { status: 503, phrase: 'Service unavailable' },
} as const

/** An error type of the API. */
export type ErrorType = keyof typeof ERROR_TYPES

/** The type of a failure that is not an API error: a body that is not the API's error envelope. */
export type UnexpectedResponse = 'unexpected_response'

/**
 * The types of a request that got no response at all: the network failed (`connection_error`),
 * the client's `timeoutMs` ran out (`timeout`), or the caller's `AbortSignal` fired (`aborted`).
 */
export type ConnectionFailure = 'connection_error' | 'timeout' | 'aborted'

/** The type of a redirect loader's refusal to hold more redirects than its `maxRedirects`. */
export type LoaderFailure = 'too_many_redirects'

type TypesOfStatus<S extends number> = {
  [T in ErrorType]: (typeof ERROR_TYPES)[T]['status'] extends S ? T : never
}[ErrorType]

interface ErrorDetails<T extends string> {
  status: number
  type: T
  message: string
  /** The response's `X-Request-Id`: quote it when reporting a problem. */
  requestId: string | null
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  retryAfter: number | null
}

/**
 * Any error of the API, or a request that got no response. `type` tells which; each status has a
 * subclass, and {@link APIConnectionError} (status `0`) stands for no response at all.
 */
export class LecternError<
  T extends string = ErrorType | UnexpectedResponse | ConnectionFailure | LoaderFailure,
> extends Error {
  readonly status: number
  readonly type: T
  readonly requestId: string | null
  readonly retryAfter: number | null

  constructor(details: ErrorDetails<T>, options?: { cause?: unknown }) {
    // `cause` is passed on only when given: ES2020 targets know no second argument of Error.
    super(details.message)
    if (options && 'cause' in options) Object.defineProperty(this, 'cause', { value: options.cause })
    this.name = new.target.name
    this.status = details.status
    this.type = details.type
    this.requestId = details.requestId
    this.retryAfter = details.retryAfter
  }
}

/** 400 (`invalid_parameters`, `bad_request`), 408, 414 or 431: the request needs fixing. */
export class InvalidRequestError extends LecternError<TypesOfStatus<400 | 408 | 414 | 431>> {}
/** 401: the API key is missing, malformed, unknown, revoked or inactive. */
export class AuthenticationError extends LecternError<TypesOfStatus<401>> {}
/**
 * 403: the key's role or scopes lack the permission the endpoint needs, or its forms leave out this
 * form; the message names the permission (and the form).
 */
export class PermissionError extends LecternError<TypesOfStatus<403>> {}
/** 404: the form (or path) does not exist. */
export class NotFoundError extends LecternError<TypesOfStatus<404>> {}
/** 405: the API only serves `GET` and `HEAD`. */
export class MethodNotAllowedError extends LecternError<TypesOfStatus<405>> {}
/** 429: over the hourly or per-second limit; `retryAfter` says when to try again. */
export class RateLimitError extends LecternError<TypesOfStatus<429>> {}
/** 500: a failure on the server; `requestId` finds it in the server's log. */
export class ServerError extends LecternError<TypesOfStatus<500> | UnexpectedResponse> {}
/** 503: the server cannot reach its database, or is shutting down; `retryAfter` says when to try again. */
export class ServiceUnavailableError extends LecternError<TypesOfStatus<503>> {}

/**
 * No response arrived: the connection failed, or was cut by a timeout or an abort. `status` is `0`,
 * `requestId` is `null`, and `cause` holds what `fetch` threw. Not retried: the request may or may
 * not have reached the server, and only the server's own `429` and `503` say it is safe to come back.
 */
export class APIConnectionError<T extends ConnectionFailure = ConnectionFailure> extends LecternError<T> {
  constructor(type: T, message: string, cause?: unknown) {
    super({ status: 0, type, message, requestId: null, retryAfter: null }, { cause })
  }
}
/** The client's `timeoutMs` ran out before the response (headers and body) arrived. */
export class APITimeoutError extends APIConnectionError<'timeout'> {}
/** The caller's `AbortSignal` fired, during the request or during a wait before a retry. */
export class RequestAbortedError extends APIConnectionError<'aborted'> {}

/**
 * A redirect loader found more active redirects than its `maxRedirects` and kept the ones it had.
 * `status` is `0`: no response failed.
 */
export class RedirectLimitError extends LecternError<LoaderFailure> {
  constructor(readonly maxRedirects: number) {
    super({
      status: 0,
      type: 'too_many_redirects',
      message: `Lectern has more than ${maxRedirects} active redirects, the loader's maxRedirects: raise it, or serve them from the web server's configuration (lectern redirects export)`,
      requestId: null,
      retryAfter: null,
    })
  }
}

const CLASS_BY_STATUS: Record<
  (typeof ERROR_TYPES)[ErrorType]['status'],
  new (
    details: ErrorDetails<never>,
  ) => LecternError
> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  405: MethodNotAllowedError,
  408: InvalidRequestError,
  414: InvalidRequestError,
  429: RateLimitError,
  431: InvalidRequestError,
  500: ServerError,
  503: ServiceUnavailableError,
}

const TYPE_BY_LABEL = new Map<string, ErrorType>(
  (Object.keys(ERROR_TYPES) as ErrorType[]).flatMap((type) => [
    [type, type],
    [ERROR_TYPES[type].phrase, type],
  ]),
)

/** `Retry-After` in seconds: either a number of seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null
  if (/^\d+$/.test(value.trim())) return Number(value)
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000))
}

/** The error a failed response stands for, from its status, headers and `{ error, message }` body. */
export function errorFromBody(status: number, headers: Headers, text: string): LecternError {
  let body: { error?: unknown; message?: unknown } = {}
  try {
    body = JSON.parse(text) as typeof body
  } catch {
    // Not the API's envelope (a proxy's error page, say): reported as an unexpected response below.
  }
  const type = typeof body.error === 'string' ? TYPE_BY_LABEL.get(body.error) : undefined
  const details: ErrorDetails<never> = {
    status,
    type: (type ?? 'unexpected_response') as never,
    message:
      typeof body.message === 'string' ? body.message : `Unexpected HTTP ${status} response from Lectern`,
    requestId: headers.get('x-request-id'),
    retryAfter: parseRetryAfter(headers.get('retry-after')),
  }
  if (type !== undefined) return new CLASS_BY_STATUS[ERROR_TYPES[type].status](details)
  // Not the envelope (a proxy's page, say): its status still says which kind it is, as the Python
  // and PHP clients read it.
  const byStatus = CLASS_BY_STATUS[status as keyof typeof CLASS_BY_STATUS]
  if (byStatus !== undefined) return new byStatus(details)
  return status >= 500 ? new ServerError(details) : new LecternError(details)
}
