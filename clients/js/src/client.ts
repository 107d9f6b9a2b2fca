import { ServerError } from './errors.js'
import { ResponseMemory } from './response-memory.js'
import type {
  Form,
  FormDetail,
  ListFormSubmissionsParams,
  ListFormsParams,
  ListMeta,
  ListPagesParams,
  ListRedirectsParams,
  Page,
  Redirect,
  Submission,
} from './schema.js'
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_RETRY,
  type FetchFunction,
  type LastResponse,
  type RateLimitState,
  type RequestOptions,
  type RetryOptions,
  type SleepFunction,
  Transport,
} from './transport.js'

export interface LecternOptions {
  /** Where Lectern runs, e.g. `https://content.example.com` (the API lives under `/api/v1`). */
  baseUrl: string
  /** An API key (`lk_live_…`). Keep it on a server: never ship it to a browser. */
  apiKey: string
  /** A `fetch` to use instead of the global one (a proxy agent, a test double). */
  fetch?: FetchFunction
  /** Retries of `429` and `503` (see {@link RetryOptions}); `false` never retries. */
  retry?: Partial<RetryOptions> | false
  /** Retries after the first attempt (default 2; `0` never retries): the same as `retry.maxRetries`. */
  maxRetries?: number
  /**
   * Milliseconds one attempt may take, response body included, before it fails with an
   * `APITimeoutError`. Default 30 000; `0` waits for ever.
   */
  timeoutMs?: number
  /**
   * The most bytes a response body may hold once decompressed (default 32 MiB): a larger one fails
   * with a `ServerError` of type `unexpected_response` instead of filling the memory.
   */
  maxResponseBytes?: number
  /**
   * How many recent `GET` responses to remember with their `ETag` (default 100). Asking for one of
   * them again sends `If-None-Match`, and an unchanged list costs the server a `304` and no body.
   * `0` sends no conditional requests.
   */
  etagCacheSize?: number
  /** How to wait before a retry: a fake clock's sleep in tests. Real timers by default. */
  sleep?: SleepFunction
  /** The source of retry jitter, a number in [0, 1): fixed in tests. `Math.random` by default. */
  random?: () => number
}

/** The most responses remembered for conditional requests unless `etagCacheSize` says otherwise. */
export const DEFAULT_ETAG_CACHE_SIZE = 100

/** One page of a list, as every endpoint answers. */
export interface List<Item> {
  data: Item[]
  meta: ListMeta
}

/** Parameters of `all()`: those of `list()` but the page, which `all()` walks through itself. */
export type AllParams<Params> = Omit<Params, 'page'>

/** The largest page the API serves: `all()` asks for it, to make as few requests as possible. */
const MAX_PAGE_SIZE = 100

/**
 * Every item of a list, fetching page after page as the loop asks for more. Items added or
 * removed while the loop runs may shift the pages, so an item can be missed or seen twice.
 * The first page's `total` and `totalPages` bound the walk, and an empty page ends it: a server
 * whose later pages announce ever more cannot keep it going for ever.
 */
async function* allItems<Item, Params extends { pageSize?: number }>(
  list: (params: Params & { page: number }) => Promise<List<Item>>,
  params: Params,
): AsyncGenerator<Item, void> {
  const pageSize = params.pageSize ?? MAX_PAGE_SIZE
  let total = Number.POSITIVE_INFINITY
  let totalPages = Number.POSITIVE_INFINITY
  let seen = 0
  for (let page = 1; ; page++) {
    const { data, meta } = await list({ ...params, pageSize, page })
    if (page === 1) {
      total = meta.total
      totalPages = meta.totalPages
    }
    yield* data
    seen += data.length
    if (data.length === 0 || seen >= total || page >= totalPages) return
  }
}

/** A list endpoint, read a page at a time with `list()` or item by item with `all()`. */
class Listing<Params extends { page?: number; pageSize?: number }, Item> {
  constructor(
    protected readonly transport: Transport,
    private readonly path: string,
  ) {}

  /** One page of the list. */
  list(params: Params = {} as Params, options?: RequestOptions): Promise<List<Item>> {
    return this.transport.get(this.path, { ...params }, options)
  }

  /** Every item of the list, page after page, as the loop asks for more. */
  all(
    params: AllParams<Params> = {} as AllParams<Params>,
    options?: RequestOptions,
  ): AsyncGenerator<Item, void> {
    return allItems((page) => this.list(page as Params & { page: number }, options), params)
  }
}

/**
 * `GET /api/v1/forms` (needs `forms:read`): forms oldest first, filtered by `active`;
 * `GET /api/v1/forms/{id}` (needs `forms:read`): one form with its fields and intake address; and
 * `GET /api/v1/forms/{id}/submissions` (needs `submissions:read`): a form's submissions, newest first.
 */
export class Forms extends Listing<ListFormsParams, Form> {
  constructor(transport: Transport) {
    super(transport, '/forms')
  }

  /**
   * One form with its field definitions and the address a site posts it to, so a site can render
   * it; an unknown form is a `NotFoundError`.
   */
  async get(formId: string, options?: RequestOptions): Promise<FormDetail> {
    if (typeof formId !== 'string' || formId === '')
      throw new TypeError('Lectern: formId must be a non-empty string')
    const body = await this.transport.get<{ data?: unknown } | null>(
      `/forms/${encodeURIComponent(formId)}`,
      {},
      options,
    )
    // A proxy's or another server's JSON must not pass for a form.
    if (typeof body?.data !== 'object' || body.data === null || Array.isArray(body.data))
      throw new ServerError({
        status: 200,
        type: 'unexpected_response',
        message:
          'Unexpected response from Lectern: the form is not an object under `data` (is the base URL right?)',
        requestId: null,
        retryAfter: null,
      })
    return body.data as FormDetail
  }

  /** One page of a form's submissions; an unknown form is a `NotFoundError`. */
  submissions(
    formId: string,
    params: ListFormSubmissionsParams = {},
    options?: RequestOptions,
  ): Promise<List<Submission>> {
    return this.transport.get(`/forms/${encodeURIComponent(formId)}/submissions`, { ...params }, options)
  }

  /** Every submission of a form, newest first, page after page. */
  allSubmissions(
    formId: string,
    params: AllParams<ListFormSubmissionsParams> = {},
    options?: RequestOptions,
  ): AsyncGenerator<Submission, void> {
    return allItems((page) => this.submissions(formId, page, options), params)
  }
}

/** `GET /api/v1/page-builder` (needs `pages:read`): pages oldest first, filtered by `published`. */
export class Pages extends Listing<ListPagesParams, Page> {
  constructor(transport: Transport) {
    super(transport, '/page-builder')
  }
}

/** `GET /api/v1/page-builder/redirects` (needs `redirects:read`): redirects oldest first, filtered by `active`. */
export class Redirects extends Listing<ListRedirectsParams, Redirect> {
  constructor(transport: Transport) {
    super(transport, '/page-builder/redirects')
  }
}

/**
 * A client of the Lectern API. Failed requests throw a {@link LecternError} subclass; `429` and
 * `503` are retried first (see {@link RetryOptions}).
 *
 * ```ts
 * const lectern = new Lectern({ baseUrl: 'https://content.example.com', apiKey: process.env.LECTERN_API_KEY })
 * const { data, meta } = await lectern.forms.list({ active: true, pageSize: 50 })
 * ```
 */
export class Lectern {
  readonly forms: Forms
  readonly pages: Pages
  readonly redirects: Redirects
  private lastRateLimit: RateLimitState | null = null
  private latestResponse: LastResponse | null = null

  constructor(options: LecternOptions) {
    if (!options.baseUrl) throw new TypeError('Lectern: baseUrl is required')
    if (!options.apiKey) throw new TypeError('Lectern: apiKey is required')
    const fetch = options.fetch ?? globalThis.fetch
    if (typeof fetch !== 'function') {
      throw new TypeError('Lectern: no global fetch in this runtime; pass one as the `fetch` option')
    }
    for (const name of ['maxRetries', 'timeoutMs', 'etagCacheSize'] as const) {
      const value = options[name]
      if (value !== undefined && !(Number.isInteger(value) && value >= 0))
        throw new TypeError(`Lectern: ${name} must be a whole number of at least 0 (got ${String(value)})`)
    }
    const { maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES } = options
    if (!(Number.isInteger(maxResponseBytes) && maxResponseBytes >= 1))
      throw new TypeError(
        `Lectern: maxResponseBytes must be a whole number of at least 1 (got ${maxResponseBytes})`,
      )
    const retry: RetryOptions | false =
      options.retry === false
        ? false
        : {
            ...DEFAULT_RETRY,
            ...options.retry,
            ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
          }
    const etagCacheSize = options.etagCacheSize ?? DEFAULT_ETAG_CACHE_SIZE
    const transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      // Called unbound: browsers refuse a `fetch` called on another object than `window`.
      fetch: (input, init) => fetch(input, init),
      retry,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxResponseBytes,
      memory: etagCacheSize > 0 ? new ResponseMemory(etagCacheSize) : null,
      onResponse: (response) => {
        this.latestResponse = response
        if (response.rateLimit) this.lastRateLimit = response.rateLimit
      },
      ...(options.random ? { random: options.random } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    })
    this.forms = new Forms(transport)
    this.pages = new Pages(transport)
    this.redirects = new Redirects(transport)
  }

  /**
   * The key's rate-limit state as the latest response carrying it said, or `null` before the first
   * one. Unlike `lastResponse.rateLimit`, a response without the headers (a bad key's) leaves it be.
   */
  get rateLimit(): RateLimitState | null {
    return this.lastRateLimit
  }

  /**
   * The last HTTP response this client received: its `status` (`304` when a remembered body was
   * reused), `requestId` and `rateLimit`; `null` before the first. With requests in flight at
   * once, it is whichever arrived last.
   */
  get lastResponse(): LastResponse | null {
    return this.latestResponse
  }
}
