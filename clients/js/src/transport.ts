import {
  APIConnectionError,
  APITimeoutError,
  errorFromBody,
  LecternError,
  RequestAbortedError,
  ServerError,
} from './errors.js'
import type { ResponseMemory } from './response-memory.js'

/** How failed requests are retried. Only `429` and `503` are retried: the server asked to wait. */
export interface RetryOptions {
  /** Retries after the first attempt. Default 2. */
  maxRetries: number
  /**
   * The first wait when the server gives no `Retry-After`, doubled on each retry; also the most
   * jitter added to a `Retry-After`, so that many clients do not all come back at once. Default 500.
   */
  baseDelayMs: number
  /**
   * The longest wait before a retry. A `Retry-After` longer than this (an exhausted hourly quota)
   * is not waited for: the error is thrown at once, with its `retryAfter`. Default 30 000.
   */
  maxDelayMs: number
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 2, baseDelayMs: 500, maxDelayMs: 30_000 }

/**
 * The most bytes a response body may hold, once decompressed, unless `maxResponseBytes` says
 * otherwise: a few kilobytes of gzip can inflate to gigabytes, and the body is held in memory.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024

const RETRIED_STATUSES = new Set([429, 503])

/** The key's rate-limit state, as the last response carrying it said. */
export interface RateLimitState {
  /** Requests the key may make per hour. */
  limit: number
  /** Requests left in the current hourly window. */
  remaining: number
  /** Unix time, in seconds, when the hourly window ends. */
  reset: number
}

/** What the client knows of the last HTTP response it received (a retried `429` included). */
export interface LastResponse {
  /** The HTTP status: `200`, `304` when a remembered body was reused, or an error's status. */
  status: number
  /** The response's `X-Request-Id`: quote it when reporting a problem. */
  requestId: string | null
  /** The key's rate-limit state from this response's headers, or `null` when it had none. */
  rateLimit: RateLimitState | null
}

/** Per-request options. */
export interface RequestOptions {
  /** Aborts the request, and any wait before a retry, with a {@link RequestAbortedError}. */
  signal?: AbortSignal
}

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>

/**
 * Waits `ms` milliseconds, or rejects when `signal` aborts. Injectable so that tests of the retry
 * policy run on a fake clock instead of sleeping.
 */
export type SleepFunction = (ms: number, signal?: AbortSignal) => Promise<void>

export interface TransportOptions {
  baseUrl: string
  apiKey: string
  fetch: FetchFunction
  retry: RetryOptions | false
  /** Milliseconds an attempt (response headers and body) may take; `0` waits for ever. */
  timeoutMs: number
  /** The most bytes a response body may hold once decompressed. */
  maxResponseBytes: number
  /** Remembered bodies for conditional requests, or `null` to send none. */
  memory: ResponseMemory | null
  /** Told about every response received, before it is returned or retried. */
  onResponse(response: LastResponse): void
  /** A number in [0, 1); `Math.random` unless a test needs the jitter fixed. */
  random?: () => number
  /** How to wait before a retry; real timers unless a test brings its clock. */
  sleep?: SleepFunction
}

/** `setTimeout` as a promise that an `AbortSignal` cuts short. */
export const realSleep: SleepFunction = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })

function readRateLimit(headers: Headers): RateLimitState | null {
  const [limit, remaining, reset] = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map(
    (name) => headers.get(name),
  )
  if (limit == null || remaining == null || reset == null) return null
  return { limit: Number(limit), remaining: Number(remaining), reset: Number(reset) }
}

/**
 * The milliseconds to wait before retrying after `error`, or `null` to give up: it is not a 429 or
 * 503, the retries are used up, or the server asked for a longer wait than `maxDelayMs`. A
 * `Retry-After` is honoured (never waited less) with jitter on top; without one the wait doubles
 * from `baseDelayMs` on each attempt, with "equal jitter" (between half and all of it).
 */
export function retryDelay(
  error: LecternError,
  attempt: number,
  retry: RetryOptions | false,
  random: () => number = Math.random,
): number | null {
  if (retry === false || attempt >= retry.maxRetries || !RETRIED_STATUSES.has(error.status)) return null
  const delay =
    error.retryAfter !== null
      ? error.retryAfter * 1000 + random() * retry.baseDelayMs
      : Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** attempt) * (0.5 + random() / 2)
  return delay <= retry.maxDelayMs ? Math.round(delay) : null
}

/** Thrown by {@link readBody} when the attempt's deadline passed while it read. */
class DeadlinePassed extends Error {}

interface Received {
  status: number
  headers: Headers
  text: string
}

/**
 * Sends authenticated `GET`s to the API, revalidates what it remembers (`If-None-Match`, reusing
 * the body on `304`), retries what may be retried, and reports every response.
 */
export class Transport {
  private readonly baseUrl: string

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
  }

  async get<T>(path: string, query: Record<string, unknown>, request: RequestOptions = {}): Promise<T> {
    const url = `${this.baseUrl}/api/v1${path}${queryString(query)}`
    const { memory } = this.options
    for (let attempt = 0; ; attempt++) {
      const remembered = memory?.get(url)
      const headers: Record<string, string> = {
        Authorization: `Bearer ${this.options.apiKey}`,
        Accept: 'application/json',
      }
      if (remembered) headers['If-None-Match'] = remembered.etag
      const response = await this.send(url, headers, request.signal)
      this.options.onResponse({
        status: response.status,
        requestId: response.headers.get('x-request-id'),
        rateLimit: readRateLimit(response.headers),
      })
      if (response.status === 304 && remembered) return parseBody<T>(remembered.body, response)
      if (response.status === 200) {
        const body = parseBody<T>(response.text, response)
        const etag = response.headers.get('etag')
        if (etag) memory?.set(url, { etag, body: response.text })
        else memory?.delete(url)
        return body
      }
      const error = errorFromBody(response.status, response.headers, response.text)
      const delay = retryDelay(error, attempt, this.options.retry, this.options.random)
      if (delay === null) throw error
      try {
        await (this.options.sleep ?? realSleep)(delay, request.signal)
      } catch (reason) {
        throw new RequestAbortedError('aborted', 'The request was aborted while waiting to retry', reason)
      }
    }
  }

  /**
   * One attempt: the response and its whole body, within `timeoutMs`, as the client's own errors.
   * The timer settles the attempt itself rather than trusting `fetch` to honour the abort: a
   * runtime busy inflating a body may notice the abort late, or never.
   */
  private async send(url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Received> {
    if (signal?.aborted) throw new RequestAbortedError('aborted', 'The request was aborted', signal.reason)
    const controller = new AbortController()
    let settle: (error: LecternError) => void = () => {}
    const interrupted = new Promise<never>((_, reject) => {
      settle = reject
    })
    // Marked as handled: when the attempt wins the race, nobody waits for this one.
    interrupted.catch(() => {})
    const forwardAbort = () => {
      settle(new RequestAbortedError('aborted', 'The request was aborted', signal?.reason))
      controller.abort(signal?.reason)
    }
    signal?.addEventListener('abort', forwardAbort, { once: true })
    const { timeoutMs } = this.options
    const timeout = () =>
      new APITimeoutError('timeout', `Lectern did not answer within ${timeoutMs} ms (${url})`)
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            settle(timeout())
            controller.abort()
          }, timeoutMs)
        : undefined
    const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY
    try {
      return await Promise.race([
        this.attempt(url, headers, controller.signal, deadline, timeout),
        interrupted,
      ])
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', forwardAbort)
      // Whatever ended the attempt, nothing more of this response is read.
      controller.abort()
    }
  }

  private async attempt(
    url: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    deadline: number,
    timeout: () => APITimeoutError,
  ): Promise<Received> {
    let response: Response
    try {
      response = await this.options.fetch(url, { method: 'GET', headers, signal })
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause)
      throw new APIConnectionError('connection_error', `Could not reach Lectern at ${url}: ${reason}`, cause)
    }
    let text: string
    try {
      text = await readBody(response, this.options.maxResponseBytes, deadline)
    } catch (cause) {
      if (cause instanceof LecternError) throw cause
      if (cause instanceof DeadlinePassed) throw timeout()
      const reason = cause instanceof Error ? cause.message : String(cause)
      throw new APIConnectionError(
        'connection_error',
        `The response of Lectern at ${url} broke off: ${reason}`,
        cause,
      )
    }
    return { status: response.status, headers: response.headers, text }
  }
}

/**
 * The body as text, read a chunk at a time so that it stops at `maxBytes` (counted after `fetch`
 * decompressed it) and at the deadline, which is checked here too: a stream that always has the
 * next chunk ready can keep the timer from running.
 */
async function readBody(response: Response, maxBytes: number, deadline: number): Promise<string> {
  const tooLarge = () =>
    new ServerError({
      status: response.status,
      type: 'unexpected_response',
      message: `Lectern's response is larger than maxResponseBytes (${maxBytes} bytes) once decompressed`,
      requestId: response.headers.get('x-request-id'),
      retryAfter: null,
    })
  if (!response.body) {
    // A test double's or a polyfill's response without a stream.
    const text = await response.text()
    if (new TextEncoder().encode(text).byteLength > maxBytes) throw tooLarge()
    return text
  }
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  const parts: string[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > maxBytes) throw tooLarge()
      if (Date.now() > deadline) throw new DeadlinePassed()
      parts.push(decoder.decode(value, { stream: true }))
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    throw error
  }
  parts.push(decoder.decode())
  return parts.join('')
}

/** A success body as JSON; anything else (a proxy's HTML page) is a {@link ServerError}. */
function parseBody<T>(text: string, response: Received): T {
  try {
    return JSON.parse(text) as T
  } catch {
    throw new ServerError({
      status: response.status,
      type: 'unexpected_response',
      message: `Lectern answered ${response.status} with a body that is not JSON`,
      requestId: response.headers.get('x-request-id'),
      retryAfter: null,
    })
  }
}

/** `?name=value&…` for the parameters that are set; booleans as `true`/`false`. */
function queryString(query: Record<string, unknown>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.set(name, String(value))
  }
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}
