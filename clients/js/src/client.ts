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

/** A moment in time for a filter: a `Date`, or ISO 8601 text passed to the server as it is. */
export type TimeValue = Date | string

/**
 * Filters of a form's submissions: `createdAt` in `[since, until)` (either bound may be left out),
 * and the read and starred flags. A `Date` is sent as UTC with `Z`; text is sent as given, and the
 * server refuses what is not a date-time with an `InvalidRequestError` naming the parameter.
 */
export interface SubmissionFilters {
  since?: TimeValue
  until?: TimeValue
  isRead?: boolean
  isStarred?: boolean
}

/** Parameters of `forms.submissions()`: a page, its size, and the filters. */
export type SubmissionsParams = Omit<ListFormSubmissionsParams, keyof SubmissionFilters> & SubmissionFilters

/** Parameters of `submissions.sync()`: the window, the flags, and the page size it reads with. */
export interface SyncParams extends SubmissionFilters {
  /** Items per request (default 100, the most the API serves). */
  pageSize?: number
}

/** What one `submissions.sync()` run read, and the `since` of the next run. */
export interface SyncResult {
  /** The window's submissions, newest first. */
  items: Submission[]
  /** The window's end as it was sent (ISO 8601): store it, and pass it as `since` next time. */
  until: string
}

/**
 * A time as the API reads it: UTC with `Z`, whole seconds unless the `Date` has a fraction.
 * Text is left to the server, which accepts offsets and names the parameter when it is wrong.
 */
function formatTime(name: string, value: TimeValue): string {
  if (typeof value === 'string') return value
  if (!(value instanceof Date) || Number.isNaN(value.getTime()))
    throw new TypeError(`Lectern: ${name} must be a valid Date or an ISO 8601 string`)
  const text = value.toISOString()
  return text.endsWith('.000Z') ? `${text.slice(0, 19)}Z` : text
}

/** The query of a submissions list, in the caller's order, its times written as the API reads them. */
function submissionsQuery(params: SubmissionsParams): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(params).map(([name, value]) =>
      (name === 'since' || name === 'until') && value !== undefined
        ? [name, formatTime(name, value as TimeValue)]
        : [name, value],
    ),
  )
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

  /**
   * One page of a form's submissions, filtered by `since`/`until` (`createdAt` in `[since, until)`),
   * `isRead` and `isStarred`; an unknown form is a `NotFoundError`.
   */
  submissions(
    formId: string,
    params: SubmissionsParams = {},
    options?: RequestOptions,
  ): Promise<List<Submission>> {
    return this.transport.get(
      `/forms/${encodeURIComponent(formId)}/submissions`,
      submissionsQuery(params),
      options,
    )
  }

  /** Every submission of a form (the filters apply), newest first, page after page. */
  allSubmissions(
    formId: string,
    params: AllParams<SubmissionsParams> = {},
    options?: RequestOptions,
  ): AsyncGenerator<Submission, void> {
    return allItems((page) => this.submissions(formId, page, options), params)
  }
}

/**
 * Incremental reads of a form's submissions (needs `submissions:read`): `sync()` reads one window
 * `[since, until)` to its end and hands back the `until` to start the next run from.
 */
export class Submissions {
  constructor(
    private readonly forms: Forms,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Every submission of the window `[since, until)`, page by page, and the window's `until`.
   * `until` defaults to now, taken once at the start and cut to the whole second: the server counts
   * a fraction as the next second, which would let a submission of this very second fall in this
   * window after it was read, and not in the next. Without `since`, it reads everything before
   * `until` (a first run). New submissions are created after `until`, so no page shifts under it.
   *
   * ```ts
   * const { items, until } = await lectern.submissions.sync('form_contact', { since: state.until })
   * await crm.save(items)
   * state.until = until // only once the items are stored
   * ```
   */
  async sync(formId: string, params: SyncParams = {}, options?: RequestOptions): Promise<SyncResult> {
    const { since, until, pageSize = MAX_PAGE_SIZE, ...flags } = params
    const end =
      until === undefined
        ? formatTime('until', new Date(Math.floor(this.clock() / 1000) * 1000))
        : formatTime('until', until)
    const window = { ...flags, pageSize, until: end, ...(since !== undefined ? { since } : {}) }
    const items: Submission[] = []
    for await (const item of this.forms.allSubmissions(formId, window, options)) items.push(item)
    return { items, until: end }
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
  readonly submissions: Submissions
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
    this.submissions = new Submissions(this.forms)
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
