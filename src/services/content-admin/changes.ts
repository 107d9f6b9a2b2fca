import { ValidationError } from '../../errors.js'

/**
 * A form, page or redirect that cannot be saved as given. `fields` holds one sentence per field that
 * is wrong (`Title must not be empty`), so that the dashboard can say it beside the field;
 * `problems` lists the same sentences in the editor's order, for the summary above it.
 */
export class FieldValidationError<F extends string = string> extends ValidationError {
  constructor(readonly fields: Partial<Record<F, string>>) {
    const problems = Object.values<string | undefined>(fields).filter((text) => text !== undefined)
    super(problems.join('; '), problems)
    this.name = 'FieldValidationError'
  }
}

/** Throws a {@link FieldValidationError} when a reader found wrong fields. */
export function refuseWrongFields<F extends string>(fields: Partial<Record<F, string>>): void {
  if (Object.keys(fields).length > 0) throw new FieldValidationError(fields)
}

/** What a saved change changed: the fields (by API name) whose values differ, none for a save of the same values. */
export interface Saved<T> {
  item: T
  changed: string[]
}

/** The fields of `next` whose values differ from `current`'s, as `{ name: new value }` and `{ name: old value }`. */
export function differences<T extends Record<string, unknown>>(current: T, next: T) {
  const changed: string[] = []
  const after: Record<string, unknown> = {}
  const before: Record<string, unknown> = {}
  for (const name of Object.keys(next)) {
    if (current[name] === next[name]) continue
    changed.push(name)
    after[name] = next[name]
    before[name] = current[name]
  }
  return { changed, after, before }
}

/** A flag as stored. */
export const flag = (on: boolean) => (on ? (1 as const) : (0 as const))
