import { errorFromResponse, type LecternError } from './errors.js'

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

/** Per-request options. */
export interface RequestOptions {
  /** Aborts the request, and any wait before a retry. */
  signal?: AbortSignal
}

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>

export interface TransportOptions {
  baseUrl: string
  apiKey: string
  fetch: FetchFunction
  retry: RetryOptions | false
  /** Where the latest rate-limit state goes. */
  onRateLimit(state: RateLimitState): void
  /** A number in [0, 1); `Math.random` unless a test needs the jitter fixed. */
  random?: () => number
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
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
}

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

/** Sends authenticated `GET`s to the API, retries what may be retried, and tracks the rate limit. */
export class Transport {
  private readonly baseUrl: string

  constructor(private readonly options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
  }

  async get<T>(path: string, query: Record<string, unknown>, request: RequestOptions = {}): Promise<T> {
    const url = `${this.baseUrl}/api/v1${path}${queryString(query)}`
    const init: RequestInit = {
      method: 'GET',
      headers: { Authorization: `Bearer ${this.options.apiKey}`, Accept: 'application/json' },
      ...(request.signal ? { signal: request.signal } : {}),
    }
    for (let attempt = 0; ; attempt++) {
      const response = await this.options.fetch(url, init)
      const rateLimit = readRateLimit(response.headers)
      if (rateLimit) this.options.onRateLimit(rateLimit)
      if (response.ok) return (await response.json()) as T
      const error = await errorFromResponse(response)
      const delay = retryDelay(error, attempt, this.options.retry, this.options.random)
      if (delay === null) throw error
      await sleep(delay, request.signal)
    }
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
