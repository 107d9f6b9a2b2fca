import { ValidationError } from '../errors.js'
import { characterProblem } from '../limits.js'
import type { PageOf } from '../schemas.js'

/**
 * One view of a dashboard list: a search, a filter and an order (each list names its own), and a
 * numbered page of `size` rows.
 */
export interface ListView<F extends string = string, S extends string = string> {
  /** Matched case-insensitively anywhere in the list's searched columns; '' for none. */
  search: string
  filter: F
  sort: S
  size: number
  page: number
}

/** The longest search text a list accepts (a search is a scan: longer text only costs more). */
export const MAX_SEARCH_LENGTH = 200

/**
 * Reads a search text typed into a list: trimmed; a `ValidationError` when it is longer than
 * `MAX_SEARCH_LENGTH` or holds characters no text can hold (a NUL, a lone surrogate), which
 * PostgreSQL would refuse as a parameter.
 */
export function checkSearch(search: string): string {
  const text = search.trim()
  if (text.length > MAX_SEARCH_LENGTH)
    throw new ValidationError(`The search must be at most ${MAX_SEARCH_LENGTH} characters.`)
  const problem = characterProblem(text)
  if (problem !== null) throw new ValidationError(`The search ${problem}.`)
  return text
}

/** `text` as a LIKE pattern matching it anywhere, its own `%`, `_` and `\` taken literally. */
export const containsPattern = (text: string): string => `%${text.replace(/[\\%_]/g, '\\$&')}%`

/** The rows a numbered page skips. */
export const offsetOf = (view: Pick<ListView, 'page' | 'size'>): number => (view.page - 1) * view.size

/**
 * A view of a list held in memory, for the lists that people fill by hand (users, API keys: tens to
 * thousands of rows, already read whole for their counts), so a query per view would save nothing.
 */
export function viewInMemory<T, F extends string, S extends string>(
  items: readonly T[],
  view: ListView<F, S>,
  rules: {
    /** The texts the search looks in. */
    searched: (item: T) => readonly (string | null)[]
    keep: (item: T, filter: F) => boolean
    compare: Record<S, (a: T, b: T) => number>
  },
): PageOf<T> {
  const needle = view.search.toLowerCase()
  const kept = items.filter(
    (item) =>
      rules.keep(item, view.filter) &&
      (needle === '' || rules.searched(item).some((text) => text?.toLowerCase().includes(needle))),
  )
  kept.sort(rules.compare[view.sort])
  return { items: kept.slice(offsetOf(view), offsetOf(view) + view.size), total: kept.length }
}

/** Compares two texts by code point (as the databases' binary collations do), for `viewInMemory`. */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Where a numbered page is read from, given the view's total: from the start of the order, or, for
 * a page in the second half, from the end in the opposite order. Either way the rows skipped are
 * at most half the list, so the last page of a million costs what the first does, and only a page
 * in the middle skips half. The page's rows come back in the list's own order once read by id.
 */
export function pageWindow(
  view: Pick<ListView, 'page' | 'size'>,
  total: number,
): { reverse: boolean; offset: number; limit: number } {
  const offset = offsetOf(view)
  if (offset >= total) return { reverse: false, offset, limit: 0 }
  const limit = Math.min(view.size, total - offset)
  const fromEnd = total - offset - limit
  return offset <= fromEnd ? { reverse: false, offset, limit } : { reverse: true, offset: fromEnd, limit }
}
