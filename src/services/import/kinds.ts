/** The kinds of record an import holds (the `kind` of an NDJSON line). */
export type ImportKind = 'form' | 'submission' | 'page' | 'redirect'

/** Every kind, in the order problems and writes take them. */
export const KINDS: readonly ImportKind[] = ['form', 'submission', 'page', 'redirect']

/** The arrays of the JSON import format, one per kind. */
export const COLLECTIONS = ['forms', 'submissions', 'pages', 'redirects'] as const

/** The name of a JSON format array: `forms`, `submissions`, `pages` or `redirects`. */
export type Collection = (typeof COLLECTIONS)[number]

/** The kind of the records in each JSON format array. */
export const KIND_OF: Readonly<Record<Collection, ImportKind>> = {
  forms: 'form',
  submissions: 'submission',
  pages: 'page',
  redirects: 'redirect',
}

/** A number per resource, named as the JSON import format names its arrays. */
export type KindCounts = Record<Collection, number>

/** A fresh count of zero for every kind. */
export function zeroCounts(): KindCounts {
  return { forms: 0, submissions: 0, pages: 0, redirects: 0 }
}
