import type { FastifyReply, FastifyRequest } from 'fastify'
import { ValidationError } from '../errors.js'
import { html, type SafeHtml, type SafeUrl, withQuery } from '../html.js'
import type { PageOf } from '../schemas.js'
import { type ListView, MAX_SEARCH_LENGTH } from '../services/listing.js'
import type { Flash, SessionService } from '../services/sessions.js'
import { redirectWithFlash } from './requests.js'
import { sendPage } from './views/layout.js'

/** A choice of a list's filter or order: the value in the address, and what the select says. */
export interface Choice<T extends string> {
  value: T
  label: string
}

/**
 * What one dashboard list offers: its filters and orders (the first of each is the default), its
 * page sizes (the first is the default) and what its search looks in. One spec drives reading the
 * address, writing it, and the controls, so the three cannot disagree.
 */
export interface ListSpec<F extends string, S extends string> {
  /** The list's address, e.g. `/admin/redirects`. */
  base: SafeUrl
  filters: readonly Choice<F>[]
  sorts: readonly Choice<S>[]
  sizes: readonly number[]
  /** The search box's hint, e.g. "Path". */
  searchHint: string
  /** The label of the filter select, e.g. "Status". */
  filterLabel?: string
  /** What the list holds, one and many: `['redirect', 'redirects']`. */
  noun: readonly [one: string, many: string]
}

/** The choices most lists share: everything, and the two orders by age. */
export const ALL = { value: 'all', label: 'All' } as const satisfies Choice<'all'>
export const OLDEST_FIRST = { value: 'oldest', label: 'Oldest first' } as const satisfies Choice<'oldest'>
export const NEWEST_FIRST = { value: 'newest', label: 'Newest first' } as const satisfies Choice<'newest'>

/** The page sizes of every dashboard list; the first is the default. */
export const PAGE_SIZES = [20, 50, 100] as const

const first = <T>(items: readonly T[]): T => {
  const item = items[0]
  if (item === undefined) throw new Error('a list spec offers at least one choice of each')
  return item
}

/**
 * The view a query string asks for. Values outside the choices fall back to the defaults rather than
 * failing, so an old or hand-edited bookmark still opens the list; the search is trimmed (the service
 * refuses one too long or holding characters no text holds, and the list says so).
 */
export function readListView<F extends string, S extends string>(
  spec: ListSpec<F, S>,
  query: unknown,
): ListView<F, S> {
  const source = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>
  const text = (name: string) => {
    const value = source[name]
    return typeof value === 'string' ? value : ''
  }
  const pick = <T extends string>(choices: readonly Choice<T>[], value: string): T =>
    (choices.find((choice) => choice.value === value) ?? first(choices)).value
  const size = spec.sizes.find((option) => String(option) === text('size')) ?? first(spec.sizes)
  return {
    search: text('q').trim(),
    filter: pick(spec.filters, text('filter')),
    sort: pick(spec.sorts, text('sort')),
    size,
    page: /^[1-9][0-9]{0,8}$/.test(text('page')) ? Number(text('page')) : 1,
  }
}

/** The view's parameters for an address; defaults are left out, so the plain address is the default view. */
function listParams<F extends string, S extends string>(spec: ListSpec<F, S>, view: ListView<F, S>) {
  return {
    q: view.search === '' ? undefined : view.search,
    filter: view.filter === first(spec.filters).value ? undefined : view.filter,
    sort: view.sort === first(spec.sorts).value ? undefined : view.sort,
    size: view.size === first(spec.sizes) ? undefined : view.size,
  }
}

/** The address of a view at `page` (its own page when not given), optionally opened at a row. */
export function listHref<F extends string, S extends string>(
  spec: ListSpec<F, S>,
  view: ListView<F, S>,
  page: number = view.page,
  fragment?: string,
): SafeUrl {
  return withQuery(spec.base, { ...listParams(spec, view), page: page === 1 ? undefined : page }, fragment)
}

/**
 * The view as hidden fields, so that a change posted from the list (a switch, a delete) comes back
 * to the same view and page.
 */
export function listViewFields<F extends string, S extends string>(
  spec: ListSpec<F, S>,
  view: ListView<F, S>,
): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const [name, value] of Object.entries({ ...listParams(spec, view), page: view.page }))
    if (value !== undefined) fields[name] = String(value)
  return fields
}

function options<T extends string | number>(
  choices: readonly { value: T; label: string }[],
  current: T,
): SafeHtml[] {
  return choices.map(
    (choice) =>
      html`<option value="${choice.value}"${choice.value === current ? html` selected` : ''}>${choice.label}</option>`,
  )
}

/**
 * The list's search, filter, order and page size: one GET form, so every choice ends up in the
 * address and a view can be bookmarked or shared. A change of view starts at its first page.
 */
export function listControls<F extends string, S extends string>(
  spec: ListSpec<F, S>,
  view: ListView<F, S>,
  caption: string,
): SafeHtml {
  const id = (name: string) => `list-${name}`
  const narrowed = view.search !== '' || view.filter !== first(spec.filters).value
  const filter =
    spec.filters.length > 1
      ? html`<div class="field"><label for="${id('filter')}">${spec.filterLabel ?? 'Show'}</label>
  <select id="${id('filter')}" name="filter">${options(spec.filters, view.filter)}</select></div>`
      : ''
  return html`<form method="get" action="${spec.base}" class="filters" role="search" aria-label="${caption}">
  <div class="field"><label for="${id('q')}">Search</label>
  <input id="${id('q')}" name="q" type="search" value="${view.search}" maxlength="${MAX_SEARCH_LENGTH}" placeholder="${spec.searchHint}"></div>
  ${filter}
  <div class="field"><label for="${id('sort')}">Order</label>
  <select id="${id('sort')}" name="sort">${options(spec.sorts, view.sort)}</select></div>
  <div class="field"><label for="${id('size')}">Per page</label>
  <select id="${id('size')}" name="size">${options(
    spec.sizes.map((size) => ({ value: size, label: String(size) })),
    view.size,
  )}</select></div>
  <div class="actions"><button type="submit" class="button secondary">Apply</button>${narrowed ? html`<a class="button secondary" href="${listHref(spec, { ...view, search: '', filter: first(spec.filters).value }, 1)}">Clear</a>` : ''}</div>
</form>`
}

/** Whether the view shows fewer than all items (a search or a filter). */
export const isNarrowed = <F extends string, S extends string>(
  spec: ListSpec<F, S>,
  view: ListView<F, S>,
): boolean => view.search !== '' || view.filter !== first(spec.filters).value

/**
 * Where a list sends the browser instead of rendering, given the view's `total`: a page past the end
 * goes to the last page, and a malformed one (`abc`, `0`) to the first, each with a message saying
 * so, rather than an empty "Page 3 of 2" or a silent page 1. Undefined when the page is fine.
 */
function misplacedPage<F extends string, S extends string>(
  spec: ListSpec<F, S>,
  view: ListView<F, S>,
  request: FastifyRequest,
  total: number,
): { url: SafeUrl; flash: Flash } | undefined {
  const raw = (request.query as Record<string, unknown>).page
  if (raw !== undefined && String(raw) !== String(view.page))
    return {
      url: listHref(spec, view, 1),
      flash: {
        kind: 'error',
        text: `“${String(raw).slice(0, 30)}” is not a page number, so this is the first page.`,
      },
    }
  const last = Math.max(1, Math.ceil(total / view.size))
  if (view.page > last)
    return {
      url: listHref(spec, view, last),
      flash: {
        kind: 'error',
        text: `There is no page ${view.page}: the list has ${last} page${last === 1 ? '' : 's'}, and this is the last.`,
      },
    }
  return undefined
}

/**
 * A list read for a view, or, when the view's search cannot be used (too long, a NUL), the list
 * without the search and the reason, to show above it: a bad search never costs the page.
 */
async function listForView<V extends ListView, T>(
  view: V,
  list: (view: V) => Promise<T>,
): Promise<{ view: V; result: T; problem?: string }> {
  try {
    return { view, result: await list(view) }
  } catch (error) {
    if (!(error instanceof ValidationError) || view.search === '') throw error
    const plain = { ...view, search: '' }
    return { view: plain, result: await list(plain), problem: `${error.message} The search was not used.` }
  }
}

/**
 * The top of a list: why its search was not used (when it was not), its controls, and how many
 * items the view holds.
 */
export function listHeader<F extends string, S extends string>(
  spec: ListSpec<F, S>,
  view: ListView<F, S>,
  total: number,
  searchProblem: string | undefined,
): SafeHtml {
  const [one, many] = spec.noun
  return html`${searchProblem ? html`<div class="alert error" role="alert">${searchProblem}</div>` : ''}
${listControls(spec, view, `Find ${many}`)}
<p class="muted">${total} ${total === 1 ? one : many}${isNarrowed(spec, view) ? ' match' : ''}.</p>`
}

/**
 * Answers a list's GET: reads the view the address asks for with `list`, sends a misplaced page on
 * to the right one with a message, or draws the page with `render`.
 */
export async function answerList<F extends string, S extends string, T>(
  input: {
    request: FastifyRequest
    reply: FastifyReply
    sessions: SessionService
    spec: ListSpec<F, S>
    list: (view: ListView<F, S>) => Promise<PageOf<T>>
  },
  render: (listed: {
    view: ListView<F, S>
    result: PageOf<T>
    searchProblem: string | undefined
  }) => SafeHtml | Promise<SafeHtml>,
): Promise<FastifyReply> {
  const { request, reply, spec } = input
  const { view, result, problem } = await listForView(readListView(spec, request.query), input.list)
  const elsewhere = misplacedPage(spec, view, request, result.total)
  if (elsewhere) return redirectWithFlash(input.sessions, request, reply, elsewhere.url, elsewhere.flash)
  return sendPage(reply, await render({ view, result, searchProblem: problem }))
}
