import type {
  Form,
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
  DEFAULT_RETRY,
  type FetchFunction,
  type RateLimitState,
  type RequestOptions,
  type RetryOptions,
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
}

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
 */
async function* allItems<Item, Params extends { pageSize?: number }>(
  list: (params: Params & { page: number }) => Promise<List<Item>>,
  params: Params,
): AsyncGenerator<Item, void> {
  const pageSize = params.pageSize ?? MAX_PAGE_SIZE
  for (let page = 1; ; page++) {
    const { data, meta } = await list({ ...params, pageSize, page })
    yield* data
    if (page >= meta.totalPages || data.length === 0) return
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
 * `GET /api/v1/forms` (needs `forms:read`): forms oldest first, filtered by `active`; and
 * `GET /api/v1/forms/{id}/submissions` (needs `submissions:read`): a form's submissions, newest first.
 */
export class Forms extends Listing<ListFormsParams, Form> {
  constructor(transport: Transport) {
    super(transport, '/forms')
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

  constructor(options: LecternOptions) {
    if (!options.baseUrl) throw new TypeError('Lectern: baseUrl is required')
    if (!options.apiKey) throw new TypeError('Lectern: apiKey is required')
    const fetch = options.fetch ?? globalThis.fetch
    if (typeof fetch !== 'function') {
      throw new TypeError('Lectern: no global fetch in this runtime; pass one as the `fetch` option')
    }
    const transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      // Called unbound: browsers refuse a `fetch` called on another object than `window`.
      fetch: (input, init) => fetch(input, init),
      retry: options.retry === false ? false : { ...DEFAULT_RETRY, ...options.retry },
      onRateLimit: (state) => {
        this.lastRateLimit = state
      },
    })
    this.forms = new Forms(transport)
    this.pages = new Pages(transport)
    this.redirects = new Redirects(transport)
  }

  /** The key's rate-limit state as the latest response said, or `null` before the first one. */
  get rateLimit(): RateLimitState | null {
    return this.lastRateLimit
  }
}
