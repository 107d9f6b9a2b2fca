import type { FieldProblem } from '../../resources/record-reader.js'
import type { Collection, ImportKind } from './kinds.js'

/**
 * Where a record or a problem sits: an NDJSON line, an item of a JSON array, or the file itself.
 * `order` sorts problems into file order whichever check found them.
 */
export type Location =
  | { style: 'line'; order: number; line: number; kind?: ImportKind }
  | { style: 'item'; order: number; collection: Collection; index: number }
  | { style: 'file'; order: number }

/** One thing wrong with a record or the file, before its location is added (see `resources/`). */
export type { FieldProblem } from '../../resources/record-reader.js'

/** A problem as listed to the user: `line 3 (page): path must start with '/'`, `pages[0].path: …`. */
export function formatProblem(location: Location, problem: FieldProblem): string {
  const { field, message } = problem
  switch (location.style) {
    case 'line':
      return `line ${location.line}${location.kind ? ` (${location.kind})` : ''}: ${field ? `${field} ` : ''}${message}`
    case 'item':
      return `${location.collection}[${location.index}]${field ? `.${field}` : ''}: ${message}`
    case 'file':
      return field ? `${field}: ${message}` : message
  }
}

/** A short reference to a record from another record's problem: `line 3`, `pages[0]`. */
export function describeLocation(location: Location): string {
  switch (location.style) {
    case 'line':
      return `line ${location.line}`
    case 'item':
      return `${location.collection}[${location.index}]`
    case 'file':
      return 'the file'
  }
}

/** Sorts things with a location into file order; those without one (stored rows) come first. */
export const byOrder = (a: { location?: Location }, b: { location?: Location }): number =>
  (a.location?.order ?? -1) - (b.location?.order ?? -1)

/** A record kept for writing, with where it came from and how many records of the file had its id. */
export interface Located<T> {
  draft: T
  location: Location
  occurrences: number
}
