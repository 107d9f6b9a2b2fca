/** A query prepared once, run many times with new values for its named placeholders. */
export type PreparedQuery<Row> = (values?: Record<string, unknown>) => Promise<Row[]>

const PLACEHOLDER = Symbol('lectern.placeholder')
interface Placeholder {
  [PLACEHOLDER]: string
}

/**
 * A named placeholder for a prepared query: build the query with `param('formId')` where a value
 * goes, and pass `{ formId: … }` on each run. Typed as `T` so builders accept it.
 */
export function param<T = string>(name: string): T {
  return { [PLACEHOLDER]: name } as unknown as T
}

/** Maps a compiled query's parameters to this run's values, in the compiled order. */
export function bindValues(parameters: readonly unknown[], values: Record<string, unknown>): unknown[] {
  return parameters.map((p) => {
    if (typeof p !== 'object' || p === null || !(PLACEHOLDER in p)) return p
    const name = (p as Placeholder)[PLACEHOLDER]
    if (!(name in values)) throw new Error(`No value for query placeholder '${name}'`)
    return values[name]
  })
}
