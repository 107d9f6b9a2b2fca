import { randomUUID } from 'node:crypto'
import { type IncomingMessage, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import {
  ApiError,
  DomainError,
  type ErrorKind,
  type ErrorStyle,
  type ErrorType,
  errorLabel,
  UNAVAILABLE_RETRY_AFTER_S,
} from '../errors.js'

/** Writes an `ApiError` as the `{ error, message }` envelope with its status and headers. */
export function sendApiError(reply: FastifyReply, error: ApiError, style: ErrorStyle): FastifyReply {
  return reply
    .code(error.status)
    .headers(error.headers)
    .type('application/json; charset=utf-8')
    .send({ error: errorLabel(error.type, style), message: error.message })
}

/**
 * The one mapping from anything thrown to a response. `ApiError`s go out as they are; a lost
 * database becomes a 503; client mistakes that Fastify detects become 400; everything else is
 * logged with its request id and answered with a bare 500 — never a stack trace or SQL.
 */
export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof DomainError) return API_ANSWERS[error.kind](error, request)
  const status = (error as Partial<FastifyError> | null)?.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError('bad_request', 'The request could not be understood')
  }
  request.log.error({ err: error }, 'unhandled error')
  return new ApiError('internal_error', 'An unexpected error occurred')
}

/** What the API answers for each kind of service failure. */
const API_ANSWERS: Record<ErrorKind, (error: DomainError, request: FastifyRequest) => ApiError> = {
  // Input the database itself refused (e.g. a NUL character on PostgreSQL): the caller's mistake.
  invalid: (error) => new ApiError('bad_request', error.message),
  not_found: (error) => new ApiError('resource_not_found', error.message),
  unavailable: (error, request) => {
    request.log.warn({ err: error.cause ?? error }, 'backing service unavailable')
    return new ApiError(
      'service_unavailable',
      'The service is temporarily unavailable, please try again later',
      {
        'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S),
      },
    )
  },
}

/** The 404 of an unknown path; `suggestion` is the path the request probably meant, if any. */
export function notFound(suggestion?: string): ApiError {
  const hint = suggestion === undefined ? '' : `. Did you mean ${suggestion}?`
  return new ApiError('resource_not_found', `The requested resource does not exist${hint}`)
}

const CLIENT_ERRORS: Record<string, ErrorType> = {
  HPE_HEADER_OVERFLOW: 'request_header_fields_too_large',
  HPE_URI_TOO_LONG: 'uri_too_long',
  ERR_HTTP_REQUEST_TIMEOUT: 'request_timeout',
  HPE_HEADERS_TIMEOUT: 'request_timeout',
}

const CLIENT_ERROR_MESSAGES: Partial<Record<ErrorType, string>> = {
  uri_too_long: 'The request URL is too long',
  request_header_fields_too_large: 'The request headers are too large',
  request_timeout: 'The request was not received in time',
}

/**
 * The error type for a request the HTTP parser rejected. Node reports a URL longer than its header
 * limit as a header overflow; the packet it choked on tells the two apart, so such a URL is a 414.
 */
function clientErrorType(
  error: Error & { code?: string; rawPacket?: unknown },
  maxUrlLength: number,
): ErrorType {
  if (error.code === 'HPE_HEADER_OVERFLOW' && Buffer.isBuffer(error.rawPacket)) {
    const head = error.rawPacket.subarray(0, maxUrlLength + 32).toString('latin1')
    const target = /^[A-Z]+ (\S+)/.exec(head)?.[1]
    if (target !== undefined && target.length > maxUrlLength) return 'uri_too_long'
  }
  return CLIENT_ERRORS[error.code ?? ''] ?? 'bad_request'
}

/**
 * Answers requests the HTTP parser rejected (oversized headers, malformed request line) with the
 * envelope instead of a bare socket close. These never reach Fastify, so the response is written
 * by hand; the connection is closed afterwards because the parser state is unusable.
 */
export function createClientErrorHandler(style: ErrorStyle, maxUrlLength: number) {
  return (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const type = clientErrorType(error, maxUrlLength)
    writeRawError(
      socket,
      new ApiError(type, CLIENT_ERROR_MESSAGES[type] ?? 'The request could not be parsed'),
      style,
    )
  }
}

/**
 * Answers a `CONNECT` request, which Node hands to a 'connect' listener instead of the app (and
 * without one closes the socket without a word): this server is no proxy, so it is a 405 envelope.
 */
export function answerConnect(style: ErrorStyle) {
  return (_request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {})
    if (!socket.writable) {
      socket.destroy()
      return
    }
    writeRawError(
      socket,
      new ApiError('method_not_allowed', 'CONNECT is not supported: this server is not a proxy', {
        Allow: 'GET, HEAD',
      }),
      style,
    )
  }
}

/** Writes the envelope straight to a socket Fastify never saw, and closes it. */
function writeRawError(socket: Duplex, apiError: ApiError, style: ErrorStyle): void {
  const body = JSON.stringify({ error: errorLabel(apiError.type, style), message: apiError.message })
  socket.end(
    [
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${randomUUID()}`,
      ...Object.entries(apiError.headers).map(([name, value]) => `${name}: ${value}`),
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  )
}
