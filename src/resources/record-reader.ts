import {
  KindGuard,
  type Static,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
  Type,
} from '@sinclair/typebox'
import { closestName } from '../closest-name.js'
import { idProblem, MAX_ID_LENGTH } from '../ids.js'
import { describeJsonType, type JsonObject } from '../json.js'
import { FIELD_LIMITS, textProblem } from '../limits.js'
import { parseTimestamp } from '../time.js'

/**
 * The one way a resource's input is read, whoever gives it: an import record, the dashboard's
 * editor, a CSV row. A resource module (`page.ts`, `redirect.ts`, …) builds its reader from its API
 * schema with {@link importFields} and {@link recordReader}; each face then words the problems its
 * own way (`line 3 (page): path must start with '/'`, `Path must start with '/'`).
 */

/** One thing wrong with a record, before a face says where it is. */
export interface FieldProblem {
  field?: string
  /** A predicate that follows the field name: `must be a boolean`, `'form_x' does not exist`. */
  message: string
}

/** API fields a record may leave out although the API always shows them: generated or derived. */
type Derived = 'id' | 'createdAt' | 'updatedAt'
const DERIVED: ReadonlySet<string> = new Set<Derived>(['id', 'createdAt', 'updatedAt'])

/** Why a present value was refused: a predicate such as `must be true or false (got 1)`. */
export class Refusal {
  constructor(readonly message: string) {}
}

/** Ids are checked against the id alphabet (`ids.ts`); `format: 'id'` marks them for the checker. */
export const RecordId = Type.String({ format: 'id', maxLength: MAX_ID_LENGTH })

/** The field limits (`limits.ts`) of one record kind, by field name. */
type Limits = Record<string, number>

type ImportFields<T extends TProperties> = { [K in keyof T]: K extends Derived ? TOptional<T[K]> : T[K] }

/**
 * The import record's fields for a resource's API fields, in the API's order (the order problems
 * are listed in). Beyond the API's schema: ids and timestamps may be left out, booleans default to
 * `false` unless `defaults` says otherwise, and the `filled` strings must hold more than whitespace
 * (marked `minLength: 1`). Nullable fields default to `null` (see {@link compileField}).
 */
export function importFields<T extends TProperties>(
  fields: T,
  rules: {
    filled?: (keyof T & string)[]
    defaults?: { [K in keyof T]?: Static<T[K]> }
    limits?: { [K in keyof T]?: number }
  } = {},
): ImportFields<T> {
  const imported: TProperties = {}
  for (const [name, field] of Object.entries(fields)) {
    const fallback = rules.defaults?.[name] ?? (KindGuard.IsBoolean(field) ? false : undefined)
    const schema = withLimit(name, field, (rules.limits as Limits | undefined)?.[name])
    if (name === 'id') imported[name] = Type.Optional(RecordId)
    else if (DERIVED.has(name)) imported[name] = Type.Optional(schema)
    else if (rules.filled?.includes(name)) imported[name] = { ...schema, minLength: 1 }
    else if (fallback !== undefined) imported[name] = { ...schema, default: fallback }
    else imported[name] = schema
  }
  return imported as ImportFields<T>
}

/**
 * The field's schema with its `maxLength` from the table of limits. Every text field must have one
 * (timestamps have theirs): a text field without a limit is a programming error, found at start-up.
 */
function withLimit(name: string, schema: TSchema, limit: number | undefined): TSchema {
  const isText = schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'))
  if (!isText || KindGuard.IsLiteral(schema) || name === 'id') return schema
  const maxLength = schema.format === 'date-time' ? FIELD_LIMITS.timestamp : limit
  if (maxLength === undefined) throw new Error(`the import field '${name}' has no length limit in limits.ts`)
  return { ...schema, maxLength }
}

/** The optional `kind` member of an import record: it must match where the record sits. */
export const kindField = <K extends string>(kind: K) => ({ kind: Type.Optional(Type.Literal(kind)) })

/**
 * A reader of the records that `schema` describes, collecting a problem per bad field rather than
 * stopping at the first. A bad field reads as a placeholder of its type, so a draft with problems
 * is only good for its `id` and `formId` (as the record gave them, or empty). `complete` adds what
 * a schema cannot say: generated ids, the path rules of pages and redirects.
 */
export function recordReader<S extends TObject, D>(
  schema: S,
  complete: (draft: Static<S>, problems: FieldProblem[]) => D,
  /** Checks of fields whose rules their resource module holds (a form's intake, a submission's data). */
  own: { [K in keyof S['properties']]?: Checker } = {},
): (record: JsonObject) => { draft: D; problems: FieldProblem[] } {
  const names: ReadonlySet<string> = new Set(Object.keys(schema.properties))
  const limited = Object.entries(schema.properties).flatMap(([name, field]) =>
    typeof field.maxLength === 'number' ? [{ name, maxLength: field.maxLength as number }] : [],
  )
  // Compiled once: a million-line import reads two million records.
  const fields = Object.entries(schema.properties).map(([name, field]) => ({
    name,
    read: compileField(name, field, (own as Record<string, Checker | undefined>)[name]),
  }))
  return (record) => {
    const problems: FieldProblem[] = []
    for (const key of Object.keys(record)) {
      if (names.has(key)) continue
      const suggestion = closestName(key, names)
      problems.push({
        message: `unknown field '${key}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`,
      })
    }
    const draft: JsonObject = {}
    for (const { name, read } of fields) draft[name] = read(record[name], problems)
    const completed = complete(draft as Static<S>, problems)
    // Every text field's length and characters (limits.ts), unless the field was refused already:
    // its own rule (an id's alphabet, a redirect path's rules) said it first, in its own words.
    for (const { name, maxLength } of limited) {
      const value = record[name]
      if (typeof value !== 'string' || problems.some((problem) => problem.field === name)) continue
      const problem = textProblem(value, maxLength)
      if (problem !== null) problems.push({ field: name, message: problem })
    }
    return { draft: completed, problems }
  }
}

/** Reads one field's value (`undefined` when absent); a bad value adds a problem and gives a placeholder. */
type ReadField = (value: unknown, problems: FieldProblem[]) => unknown

/**
 * An absent field is `undefined` when optional, else its `default`, else `null` when nullable,
 * else a problem. A present field is checked against its schema.
 */
function compileField(name: string, schema: TSchema, own: Checker | undefined): ReadField {
  const nullable = Array.isArray(schema.type) && schema.type.includes('null')
  const optional = KindGuard.IsOptional(schema)
  const fallback: unknown = schema.default
  const { check, placeholder } = own ?? checkerFor(name, schema, nullable)
  const fail = (problems: FieldProblem[], message: string) => {
    problems.push({ field: name, message })
    return placeholder
  }
  return (value, problems) => {
    if (value === undefined) {
      if (optional) return undefined
      if (fallback !== undefined) return fallback
      return nullable ? null : fail(problems, 'is required')
    }
    if (value === null && nullable) return null
    const checked = check(value)
    return checked instanceof Refusal ? fail(problems, checked.message) : checked
  }
}

/** How one field's present value is checked. */
export interface Checker {
  /** The value to keep (a timestamp in canonical UTC form), or why it is refused. */
  check(value: unknown): unknown
  /** What a refused or missing field reads as, so that later checks still see its type. */
  placeholder: unknown
}

/** A checker that keeps the values `accept` takes as they are. */
function keeping(
  placeholder: unknown,
  accept: (value: unknown) => boolean,
  refuse: (value: unknown) => string,
): Checker {
  return { placeholder, check: (value) => (accept(value) ? value : new Refusal(refuse(value))) }
}

/** The checks for each type of field the resources' schemas use, with the messages users see. */
/** The checks for each type of field the resources' schemas use, with the messages users see. */
function checkerFor(name: string, schema: TSchema, nullable: boolean): Checker {
  const got = (value: unknown) => `(got ${JSON.stringify(value)})`
  const gotType = (value: unknown) => `(got ${describeJsonType(value)})`
  const isString = (value: unknown): value is string => typeof value === 'string'
  const fallback: unknown = schema.default

  if (KindGuard.IsLiteral(schema)) {
    const expected = schema.const
    return keeping(
      undefined,
      (value) => value === expected,
      (value) => `must be '${expected}' here ${got(value)}`,
    )
  }
  if (KindGuard.IsUnion(schema) && schema.anyOf.every(KindGuard.IsLiteral)) {
    const values: unknown[] = schema.anyOf.map((literal) => literal.const)
    const expected = values.map((value) => `'${value}'`).join(' or ')
    return keeping(
      fallback,
      (value) => values.includes(value),
      (value) => `must be ${expected} ${got(value)}`,
    )
  }
  if (KindGuard.IsBoolean(schema)) {
    return keeping(
      fallback,
      (value) => typeof value === 'boolean',
      (value) => `must be true or false ${got(value)}`,
    )
  }
  if (schema.format === 'id') {
    return {
      placeholder: '',
      check: (value) => {
        if (!isString(value)) return new Refusal(`must be a string ${gotType(value)}`)
        const problem = idProblem(value)
        return problem === null ? value : new Refusal(problem)
      },
    }
  }
  if (schema.format === 'date-time') {
    const expected = `an ISO 8601 date-time such as 2024-01-05T10:00:00Z${nullable ? ' or null' : ''}`
    return {
      placeholder: undefined,
      check: (value) =>
        (isString(value) ? readTimestamp(value) : null) ?? new Refusal(`must be ${expected} ${got(value)}`),
    }
  }
  if (nullable && schema.type.includes('string')) {
    return keeping(null, isString, (value) => `must be a string or null ${gotType(value)}`)
  }
  if (KindGuard.IsString(schema) && fallback !== undefined) {
    return keeping(
      fallback,
      (value) => isString(value) && value.trim() !== '',
      (value) => `must be a non-empty string ${gotType(value)}`,
    )
  }
  if (KindGuard.IsString(schema)) {
    // `minLength: 1` marks a field that must hold more than whitespace: a title of spaces is no title.
    const filled = (schema.minLength ?? 0) > 0
    return keeping(
      '',
      (value) => isString(value) && !(filled && value.trim() === ''),
      (value) => (isString(value) ? 'must not be empty' : `must be a string ${gotType(value)}`),
    )
  }
  throw new Error(`the record reader has no check for field '${name}' (${JSON.stringify(schema)})`)
}

/**
 * {@link parseTimestamp}, with the form nearly every import uses (`2024-01-05T10:00:00Z`, a real
 * date and time) accepted by arithmetic on its digits, sparing large imports a `Date` per
 * timestamp. Everything else goes to `parseTimestamp`, so the result is always the same as its.
 */
export function readTimestamp(value: string): string | null {
  return isCanonicalTimestamp(value) ? value : parseTimestamp(value)
}

const DIGIT_0 = 48
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Whether `value` is `YYYY-MM-DDTHH:MM:SSZ` naming a real date (leap days included) and time. */
function isCanonicalTimestamp(value: string): boolean {
  if (value.length !== 20 || value.charCodeAt(19) !== 0x5a) return false
  const number = (start: number, length: number): number => {
    let result = 0
    for (let i = start; i < start + length; i++) {
      const digit = value.charCodeAt(i) - DIGIT_0
      if (digit < 0 || digit > 9) return -1
      result = result * 10 + digit
    }
    return result
  }
  if (value[4] !== '-' || value[7] !== '-' || value[10] !== 'T' || value[13] !== ':' || value[16] !== ':')
    return false
  const year = number(0, 4)
  const month = number(5, 2)
  const day = number(8, 2)
  const hour = number(11, 2)
  const minute = number(14, 2)
  const second = number(17, 2)
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return false
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return day <= (month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number))
}

/**
 * A reader's problems as one sentence per field a person filled in, in `labels`' order
 * (`Title must not be empty`), for an editor to say beside each field. A face sends every field the
 * reader asks for, so a problem with no label is a programming error and is not hidden.
 */
export function problemsByField<F extends string>(
  problems: readonly FieldProblem[],
  labels: Record<F, string>,
): Partial<Record<F, string>> {
  const fields: Partial<Record<F, string>> = {}
  for (const name of Object.keys(labels) as F[]) {
    const problem = problems.find((item) => item.field === name)
    if (problem) fields[name] = `${labels[name]} ${problem.message}`
  }
  const other = problems.find((item) => item.field === undefined || !(item.field in labels))
  if (other) throw new Error(`a record the reader refuses was sent: ${other.field ?? ''} ${other.message}`)
  return fields
}
