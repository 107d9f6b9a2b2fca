import type { FastifyRequest } from 'fastify'

/** What a secret is replaced with in a log line. */
export const REDACTED = '[redacted]'

/** Headers that carry credentials, in requests or responses; compared lower-cased. */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-csrf-token',
])

/** Query parameters whose values are credentials when a client puts one in a URL; compared lower-cased. */
const SECRET_QUERY_PARAMETERS = new Set(['api_key', 'apikey', 'key', 'token', 'access_token', 'password'])

/**
 * Whether a text may hold a secret parameter's name: every name above contains one of these words,
 * and a percent-encoded name, or one with a letter outside ASCII that lower-cases into it (`K`, the
 * Kelvin sign), may spell any of them. Most logged URLs (`?page=2&pageSize=20`) fail this test, and
 * skip decoding their pairs, on every request's log line.
 */
const MAY_NAME_A_SECRET = /key|token|password|%|[^ -~]/i

/** `name=value` pairs of a query string: the name ends at `=`, `&` or `#`. */
const QUERY_PAIR = /([?&;])([^=&#;]*)=([^&#;]*)/g

/**
 * A URL (or any text holding one) with the value of every secret-looking query parameter replaced,
 * so a key sent as `?api_key=…` never reaches a log. Names are matched case-insensitively, also when
 * percent-encoded.
 */
export function redactUrl(url: string): string {
  if (!url.includes('=') || !MAY_NAME_A_SECRET.test(url)) return url
  return url.replace(QUERY_PAIR, (pair, separator: string, name: string) => {
    let decoded = name
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, ' '))
    } catch {
      // A malformed name is compared as sent.
    }
    return SECRET_QUERY_PARAMETERS.has(decoded.trim().toLowerCase())
      ? `${separator}${name}=${REDACTED}`
      : pair
  })
}

/** A headers object with every credential header's value replaced; other headers are kept as they are. */
export function redactHeaders(headers: unknown): unknown {
  if (headers === null || typeof headers !== 'object') return headers
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? REDACTED : redactValue(value, 1)
  }
  return out
}

const isPlainObject = (value: object): boolean => {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * Scrubs anything a log call is given, however deep a plugin tucked the headers away (multipart
 * logs the options it hands busboy, request headers included, at trace): credential headers by
 * name, secret query parameters in any string. Only plain objects and arrays are walked; requests,
 * replies and errors are left to their serializers, which scrub too.
 */
function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactUrl(value)
  if (value === null || typeof value !== 'object' || depth > 8) return value
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1))
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [name, item] of Object.entries(value)) {
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? REDACTED : redactValue(item, depth + 1)
  }
  return out
}

/** The request as Fastify logs it, with the URL's secret query values replaced. */
function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

interface SerializedError {
  [key: string]: unknown
  type: string
  message: string
  stack: string
}

function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { type: typeof error, message: redactUrl(String(error)), stack: '' }
  const withCode = error as Error & { code?: unknown; statusCode?: unknown }
  return {
    type: error.name,
    message: redactUrl(error.message),
    stack: redactUrl(error.stack ?? ''),
    ...(withCode.code === undefined ? {} : { code: withCode.code }),
    ...(withCode.statusCode === undefined ? {} : { statusCode: withCode.statusCode }),
    ...(error.cause === undefined ? {} : { cause: serializeError(error.cause) }),
  }
}

/**
 * The logger options that keep credentials out of every log line at every level: serializers for
 * the request (URL query values), headers and errors, and a last pass over whatever else a log call
 * or a plugin passes (`formatters.log`), since a plugin may log headers under any name. pino's own
 * `redact` paths are not used: the request serializer writes no headers, and the last pass already
 * replaces every credential header wherever it is, while those paths cost each request's line a
 * third of its CPU.
 */
export function redactingLoggerOptions() {
  return {
    serializers: {
      req: serializeRequest,
      headers: redactHeaders,
      err: serializeError,
      error: serializeError,
    },
    formatters: {
      log: (object: Record<string, unknown>) => redactValue(object, 0) as Record<string, unknown>,
    },
  }
}
