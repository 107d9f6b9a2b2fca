import { ERROR_TYPES, type ErrorType } from '../../errors.js'

/** A response header as the OpenAPI document describes it. */
export interface DocumentedHeader {
  description: string
  /** Whether every response of its kind carries the header. */
  required: boolean
  schema: Record<string, unknown>
}

type HeaderName =
  | 'X-Request-Id'
  | 'X-RateLimit-Limit'
  | 'X-RateLimit-Remaining'
  | 'X-RateLimit-Reset'
  | 'RateLimit-Policy'
  | 'RateLimit'
  | 'Lectern-Warning'
  | 'Retry-After'
  | 'WWW-Authenticate'
  | 'Allow'
  | 'ETag'
  | 'Cache-Control'

const HEADERS: Record<HeaderName, Omit<DocumentedHeader, 'required'>> = {
  'X-Request-Id': {
    description:
      "Identifies the request in the server's logs. A sane incoming `X-Request-Id` (1–128 of `A-Za-z0-9._:-`) is echoed; otherwise one is generated.",
    schema: { type: 'string', examples: ['5f0c6c1e-2b9f-4bb8-9d4e-0d6f6f2e6c1a'] },
  },
  'X-RateLimit-Limit': {
    description: "Requests the API key may make per hour (the server's `RATE_LIMIT_PER_HOUR`).",
    schema: { type: 'integer', minimum: 0, examples: [1000] },
  },
  'X-RateLimit-Remaining': {
    description: "Requests left in the key's hourly window after this one; never negative.",
    schema: { type: 'integer', minimum: 0, examples: [998] },
  },
  'X-RateLimit-Reset': {
    description:
      "Unix time, in seconds, when the key's hourly window ends. The window starts with the key's first request and lasts 3600 s.",
    schema: { type: 'integer', minimum: 0, examples: [1704452400] },
  },
  'RateLimit-Policy': {
    description:
      'Both limits of the key, as the IETF draft `draft-ietf-httpapi-ratelimit-headers` writes them: `q` requests per `w` seconds, for the hourly window (`"hour"`) and the rolling second (`"burst"`).',
    schema: { type: 'string', examples: ['"hour";q=1000;w=3600, "burst";q=10;w=1'] },
  },
  RateLimit: {
    description:
      'What is left (IETF draft): `r` requests remaining in the hourly window and `t` seconds until it resets. When the per-second limit refused the request, a `"burst";r=0;t=…` item follows.',
    schema: { type: 'string', examples: ['"hour";r=962;t=1200'] },
  },
  'Lectern-Warning': {
    description:
      "Names the query parameters the endpoint does not know and ignored, e.g. `unknown query parameter 'pagesize' ignored`; sent only when there are any.",
    schema: { type: 'string', examples: ["unknown query parameter 'pagesize' ignored"] },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', minimum: 0, examples: [1] },
  },
  'WWW-Authenticate': {
    description:
      'The authentication challenge: `Bearer`, with `error="invalid_token"` for an unknown, revoked or inactive key.',
    schema: { type: 'string', examples: ['Bearer error="invalid_token"'] },
  },
  Allow: {
    description: 'The methods the API serves.',
    schema: { type: 'string', enum: ['GET, HEAD'] },
  },
  ETag: {
    description:
      'Identifies this page of the list as it stands; send it back in `If-None-Match` to get `304` while nothing changed.',
    schema: { type: 'string', examples: ['"v42-3f9a1c0b"'] },
  },
  'Cache-Control': {
    description: 'Caches may keep the response for this key only, and must revalidate it before reuse.',
    schema: { type: 'string', examples: ['private, no-cache'] },
  },
}

function headers(required: HeaderName[], optional: HeaderName[] = []): Record<string, DocumentedHeader> {
  return Object.fromEntries([
    ...required.map((name) => [name, { ...HEADERS[name], required: true }]),
    ...optional.map((name) => [name, { ...HEADERS[name], required: false }]),
  ])
}

const RATE_LIMIT_HEADERS: HeaderName[] = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
]

/** The headers of a list page: the request id, the key's rate-limit state and the page's entity tag. */
export const SUCCESS_HEADERS = headers(
  ['X-Request-Id', ...RATE_LIMIT_HEADERS, 'ETag', 'Cache-Control'],
  ['Lectern-Warning'],
)

/** The headers of a `304 Not Modified`. */
export const NOT_MODIFIED_HEADERS = headers(
  ['X-Request-Id', ...RATE_LIMIT_HEADERS, 'ETag'],
  ['Cache-Control', 'Lectern-Warning'],
)

interface ErrorStatus {
  /** The response's name among the document's components. */
  name: string
  description: string
  headers: Record<string, DocumentedHeader>
  /** An example message per error type of this status. */
  examples: Partial<Record<ErrorType, string>>
}

// Rate-limit headers come with every response to a request whose key was valid and active: they
// are certain only when the status implies such a key (403, 429).
const ERROR_STATUSES: Record<number, ErrorStatus> = {
  400: {
    name: 'BadRequest',
    description:
      'A query parameter is invalid or given twice (`invalid_parameters`; the message names every problem), or the request cannot be read (`bad_request`).',
    headers: headers(['X-Request-Id'], [...RATE_LIMIT_HEADERS, 'Lectern-Warning']),
    examples: {
      invalid_parameters: "Page size (parameter 'pageSize') must be between 1 and 100",
      bad_request: 'The request URL is malformed',
    },
  },
  401: {
    name: 'Unauthorized',
    description:
      'The `Authorization` header is missing or blank, is not `Bearer <API_KEY>`, or names a key that is unknown, revoked or whose creator was deleted (`invalid_api_key`), or one that is deactivated or whose creator is disabled (`api_key_inactive`).',
    headers: headers(['X-Request-Id', 'WWW-Authenticate']),
    examples: {
      missing_authorization_header: "Provide an API key in the Authorization header as 'Bearer <API_KEY>'",
      invalid_authorization_format: "Authorization header must be in the format 'Bearer <API_KEY>'",
      invalid_api_key: 'The provided API key is invalid or has been revoked',
      api_key_inactive: 'The provided API key has been deactivated',
    },
  },
  403: {
    name: 'Forbidden',
    description:
      "The key may not do this: its creator's role lacks the permission this endpoint needs, or the key's scopes (or forms, for submissions) leave it out. The message names the permission, and the form for a key narrowed to other forms.",
    headers: headers(['X-Request-Id', ...RATE_LIMIT_HEADERS]),
    examples: { insufficient_permissions: "This API key does not have the 'submissions:read' permission" },
  },
  404: {
    name: 'NotFound',
    description:
      'The form, or the path, does not exist. For a near miss of a path (a trailing slash, another letter case) the message names the path it probably meant: `Did you mean /api/v1/forms?`.',
    headers: headers(['X-Request-Id'], RATE_LIMIT_HEADERS),
    examples: { resource_not_found: "Form 'form_x' not found" },
  },
  405: {
    name: 'MethodNotAllowed',
    description: 'The API is read-only: any method but `GET` and `HEAD`, on any `/api/v1` path.',
    headers: headers(['X-Request-Id', 'Allow'], RATE_LIMIT_HEADERS),
    examples: { method_not_allowed: 'Method POST is not allowed: this API is read-only' },
  },
  408: {
    name: 'RequestTimeout',
    description: 'The request did not arrive in time.',
    headers: headers(['X-Request-Id']),
    examples: { request_timeout: 'The request was not received in time' },
  },
  414: {
    name: 'UriTooLong',
    description:
      "The URL is longer than 8 KiB. A valid key's request is counted and carries its rate-limit headers, unless the URL is so long (over 16 KiB with the headers) that the request was refused before its headers were read.",
    headers: headers(['X-Request-Id'], RATE_LIMIT_HEADERS),
    examples: { uri_too_long: 'The request URL is too long' },
  },
  429: {
    name: 'RateLimited',
    description:
      'The key is over its hourly limit or its per-second burst limit; the message says which, and so does `RateLimit` (a `"burst";r=0` item for the per-second limit, `"hour";r=0` for the hourly one). A refused request uses no quota; retry after `Retry-After` seconds.',
    headers: headers(['X-Request-Id', 'Retry-After', ...RATE_LIMIT_HEADERS]),
    examples: {
      rate_limit_exceeded:
        'Rate limit exceeded: more than 10 requests in one second for this API key; please try again later',
    },
  },
  431: {
    name: 'HeaderFieldsTooLarge',
    description: 'The request headers are larger than 16 KiB.',
    headers: headers(['X-Request-Id']),
    examples: { request_header_fields_too_large: 'The request headers are too large' },
  },
  500: {
    name: 'InternalError',
    description:
      "An unexpected failure. The body never holds a stack trace or SQL; the server's log has the detail under the response's `X-Request-Id`.",
    headers: headers(['X-Request-Id'], RATE_LIMIT_HEADERS),
    examples: { internal_error: 'An unexpected error occurred' },
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      'The database cannot be reached, or the server is shutting down. The service recovers by itself; retry after `Retry-After` seconds.',
    headers: headers(['X-Request-Id', 'Retry-After'], RATE_LIMIT_HEADERS),
    examples: { service_unavailable: 'The service is temporarily unavailable, please try again later' },
  },
}

/** A documented error response: one status, the error types it carries and its headers. */
export interface ErrorResponse extends ErrorStatus {
  status: number
  types: ErrorType[]
}

/**
 * Every error status of the API, with the error types of the closed set (`ERROR_TYPES`) it carries.
 * A new error type shows up in the document by itself; a new status must be described above.
 */
export const ERROR_RESPONSES: ErrorResponse[] = (() => {
  const byStatus = new Map<number, ErrorType[]>()
  for (const [type, { status }] of Object.entries(ERROR_TYPES) as [ErrorType, { status: number }][]) {
    byStatus.set(status, [...(byStatus.get(status) ?? []), type])
  }
  return [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, types]) => {
      const described = ERROR_STATUSES[status]
      if (!described) throw new Error(`Error status ${status} is not described for the OpenAPI document`)
      return { status, types, ...described }
    })
})()

/** The statuses every `/api/v1` operation may answer, whatever it does. */
export const COMMON_ERROR_STATUSES = [400, 401, 403, 408, 414, 429, 431, 500, 503]

/**
 * The JSON schema of an error response's body: the `Error` envelope whose `error` is one of the
 * status's types, in code form (the default) or phrase form (`ERROR_STYLE=phrase`).
 */
export function errorBodySchema(response: ErrorResponse, errorRef = 'Error'): Record<string, unknown> {
  return {
    allOf: [
      { $ref: errorRef },
      {
        type: 'object',
        properties: {
          error: {
            type: 'string',
            enum: [...response.types, ...response.types.map((type) => ERROR_TYPES[type].phrase)],
          },
        },
      },
    ],
    examples: response.types.map((type) => ({ error: type, message: response.examples[type] ?? type })),
  }
}

/** A header as a route schema states it; the document generator lifts `required` out again. */
function routeHeaders(documented: Record<string, DocumentedHeader>) {
  return Object.fromEntries(
    Object.entries(documented).map(([name, header]) => [
      name,
      { ...header.schema, description: header.description, required: header.required },
    ]),
  )
}

/**
 * A response as a route schema states it: Fastify compiles the body schema into the serializer, and
 * @fastify/swagger reads the description and headers. A response without a body has `type: 'null'`.
 */
export function routeResponse(
  description: string,
  headers: Record<string, DocumentedHeader>,
  body: Record<string, unknown> = { type: 'null' },
) {
  return { 'x-response-description': description, headers: routeHeaders(headers), ...body }
}

/** The error responses of a route, by status, as its schema states them. */
export function routeErrorResponses(statuses: number[]) {
  return Object.fromEntries(
    ERROR_RESPONSES.filter((response) => statuses.includes(response.status)).map((response) => [
      response.status,
      routeResponse(response.description, response.headers, errorBodySchema(response)),
    ]),
  )
}
