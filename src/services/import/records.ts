import {
  KindGuard,
  type Static,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
  Type,
} from '@sinclair/typebox'
import { idProblem, MAX_ID_LENGTH } from '../../ids.js'
import { characterProblem, DATA_LIMITS, FIELD_LIMITS, textProblem } from '../../limits.js'
import { IntakeSettingsInputSchema, readIntakeSettings } from '../../resources/form.js'
import { FormSchema, PageSchema, RedirectSchema, SubmissionSchema } from '../../schemas.js'
import { parseTimestamp } from '../../time.js'
import { normaliseRedirectPath } from '../redirects/rules.js'
import { closestName } from './closest-name.js'
import { describeJsonType, isObject, type JsonObject } from './json.js'
import type { ImportKind } from './kinds.js'
import type { FieldProblem } from './locations.js'

/** API fields a record may leave out although the API always shows them: generated or derived. */
type Derived = 'id' | 'createdAt' | 'updatedAt'
const DERIVED: ReadonlySet<string> = new Set<Derived>(['id', 'createdAt', 'updatedAt'])

/** Why a present value was refused: a predicate such as `must be true or false (got 1)`. */
class Refusal {
  constructor(readonly message: string) {}
}

/** Ids are checked against the id alphabet (`ids.ts`); `format: 'id'` marks them for the checker. */
const ImportId = Type.String({ format: 'id', maxLength: MAX_ID_LENGTH })

/** The field limits (`limits.ts`) of one record kind, by field name. */
type Limits = Record<string, number>

type ImportFields<T extends TProperties> = { [K in keyof T]: K extends Derived ? TOptional<T[K]> : T[K] }

/**
 * The import record's fields for a resource's API fields, in the API's order (the order problems
 * are listed in). Beyond the API's schema: ids and timestamps may be left out, booleans default to
 * `false` unless `defaults` says otherwise, and the `filled` strings must hold more than whitespace
 * (marked `minLength: 1`). Nullable fields default to `null` (see {@link compileField}).
 */
function importFields<T extends TProperties>(
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
    if (name === 'id') imported[name] = Type.Optional(ImportId)
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

const kindField = <K extends ImportKind>(kind: K) => ({ kind: Type.Optional(Type.Literal(kind)) })

// Each record is its resource's API fields plus the fields only an import sets. Its
// `kind` is optional, but must match where the record sits.

/** Reads a form record; a missing id is generated only when the form is written. */
export const readForm = recordReader(
  Type.Object({
    ...kindField('form'),
    ...importFields(FormSchema.properties, {
      filled: ['title'],
      limits: { title: FIELD_LIMITS.formTitle, description: FIELD_LIMITS.formDescription },
    }),
    isActive: Type.Boolean({ default: true }),
    // Absent: a new form's intake stays off and an existing form's is left as it is.
    intake: Type.Optional(IntakeSettingsInputSchema),
    // The API does not show a form's timestamps, but forms keep them like every other resource.
    ...importFields(Type.Pick(PageSchema, ['createdAt', 'updatedAt']).properties),
  }),
  (draft) => draft,
)

/** Reads a submission record; a missing id is generated only when the submission is written. */
export const readSubmission = recordReader(
  Type.Object({
    ...kindField('submission'),
    ...importFields(Type.Pick(SubmissionSchema, ['id']).properties),
    // The API lists submissions under their form; an import names the form in each record.
    formId: { ...ImportId, minLength: 1 },
    ...importFields(Type.Omit(SubmissionSchema, ['id']).properties, {
      limits: {
        ipAddress: FIELD_LIMITS.ipAddress,
        userAgent: FIELD_LIMITS.userAgent,
        referrer: FIELD_LIMITS.referrer,
        submittedBy: FIELD_LIMITS.submittedBy,
        notes: FIELD_LIMITS.notes,
      },
    }),
  }),
  (draft) => draft,
)

/** Reads a page record; a missing id is generated only when the page is written. */
export const readPage = recordReader(
  Type.Object({
    ...kindField('page'),
    ...importFields(PageSchema.properties, {
      filled: ['title', 'path'],
      defaults: { pageType: 'page' },
      limits: {
        title: FIELD_LIMITS.pageTitle,
        slug: FIELD_LIMITS.slug,
        path: FIELD_LIMITS.path,
        pageType: FIELD_LIMITS.pageType,
      },
    }),
  }),
  (draft, problems) => {
    if (draft.path !== '' && !draft.path.startsWith('/'))
      problems.push({ field: 'path', message: "must start with '/'" })
    return draft
  },
)

/** Reads a redirect record; a missing id is generated only when the redirect is written. */
export const readRedirect = recordReader(
  Type.Object({
    ...kindField('redirect'),
    ...importFields(RedirectSchema.properties, {
      filled: ['fromPath', 'toPath'],
      defaults: { type: 'permanent', isActive: true },
      limits: { fromPath: FIELD_LIMITS.path, toPath: FIELD_LIMITS.path },
    }),
  }),
  (draft, problems) => {
    // Paths are stored percent-decoded: `/%C3%BCber` is kept as `/über`.
    const paths = { fromPath: draft.fromPath, toPath: draft.toPath }
    for (const field of ['fromPath', 'toPath'] as const) {
      if (draft[field] === '') continue
      const normalised = normaliseRedirectPath(draft[field])
      if (normalised.problem !== null) problems.push({ field, message: normalised.problem })
      else paths[field] = normalised.path
    }
    return { ...draft, ...paths }
  },
)

/** A form record completed with its defaults: the API's fields, `isActive` and timestamps. */
export type FormDraft = ReturnType<typeof readForm>['draft']
/** A submission record completed with its defaults; `id` stays absent when the record has none. */
export type SubmissionDraft = ReturnType<typeof readSubmission>['draft']
/** A page record completed with its defaults. */
export type PageDraft = ReturnType<typeof readPage>['draft']
/** A redirect record completed with its defaults. */
export type RedirectDraft = ReturnType<typeof readRedirect>['draft']

/**
 * A reader of the records that `schema` describes, collecting a problem per bad field rather than
 * stopping at the first. A bad field reads as a placeholder of its type, so a draft with problems
 * is only good for its `id` and `formId` (as the record gave them, or empty). `complete` adds what
 * a schema cannot say: generated ids, the path rules of pages and redirects.
 */
function recordReader<S extends TObject, D>(
  schema: S,
  complete: (draft: Static<S>, problems: FieldProblem[]) => D,
): (record: JsonObject) => { draft: D; problems: FieldProblem[] } {
  const names: ReadonlySet<string> = new Set(Object.keys(schema.properties))
  const limited = Object.entries(schema.properties).flatMap(([name, field]) =>
    typeof field.maxLength === 'number' ? [{ name, maxLength: field.maxLength as number }] : [],
  )
  // Compiled once: a million-line import reads two million records.
  const fields = Object.entries(schema.properties).map(([name, field]) => ({
    name,
    read: compileField(name, field),
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
function compileField(name: string, schema: TSchema): ReadField {
  const nullable = Array.isArray(schema.type) && schema.type.includes('null')
  const optional = KindGuard.IsOptional(schema)
  const fallback: unknown = schema.default
  const { check, placeholder } = checkerFor(name, schema, nullable)
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

interface Checker {
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

/** The import checks for each type of field the record schemas use, with the messages users see. */
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
  if (schema.$id === IntakeSettingsInputSchema.$id) {
    // The intake's own rules (resources/form.ts), the same the dashboard and the API apply.
    return {
      placeholder: undefined,
      check: (value) => {
        const { settings, problems } = readIntakeSettings(value)
        return problems.length === 0 ? settings : new Refusal(problems.join('; '))
      },
    }
  }
  if (KindGuard.IsBoolean(schema)) {
    return keeping(
      fallback,
      (value) => typeof value === 'boolean',
      (value) => `must be true or false ${got(value)}`,
    )
  }
  if (KindGuard.IsRecord(schema)) {
    return {
      placeholder: {},
      check: (value) => {
        if (!isObject(value)) return new Refusal(`must be a JSON object ${gotType(value)}`)
        const problem = dataProblem(value)
        return problem === null ? value : new Refusal(problem)
      },
    }
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
  throw new Error(`the importer has no check for field '${name}' (${JSON.stringify(schema)})`)
}

/**
 * {@link parseTimestamp}, with the form nearly every import uses (`2024-01-05T10:00:00Z`, a real
 * date and time) accepted by arithmetic on its digits. Everything else, refusals included, goes to
 * `parseTimestamp`, so the result is always the same as its; a million submissions have two
 * timestamps each, read in both passes, and the round trip through `Date` cost some 7 s of them.
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
 * Why a submission's `data` cannot be stored, or null: nested deeper than {@link DATA_LIMITS}, with
 * too many entries, a key or string value holding a NUL or a lone surrogate, or too large once
 * serialized. Walked with an explicit stack, so that data nested thousands deep (which `JSON.parse`
 * accepts) is refused with a message rather than overflowing the call stack, and before anything
 * serializes it.
 */
export function dataProblem(data: JsonObject): string | null {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: data, depth: 1, path: '' }]
  let entries = 0
  // Serialized size, counted as the walk goes (the bytes of strings as UTF-8 escaped by JSON, plus
  // punctuation), so that nothing is serialized before it is known to be small enough.
  let bytes = 0
  const where = (path: string) => (path === '' ? '' : ` (at ${path})`)
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop() as { value: unknown; depth: number; path: string }
    if (typeof value === 'string') {
      const problem = characterProblem(value)
      if (problem !== null)
        return `${problem.replace(/^must not/, 'must not hold strings that')}${where(path)}`
      bytes += jsonStringBytes(value)
    } else if (typeof value === 'object' && value !== null) {
      if (depth > DATA_LIMITS.depth) {
        return `must not be nested more than ${DATA_LIMITS.depth} levels deep${where(path)}`
      }
      const items = Array.isArray(value) ? value.entries() : Object.entries(value)
      bytes += 2
      for (const [key, item] of items) {
        entries++
        if (entries > DATA_LIMITS.entries) {
          return `must not hold more than ${DATA_LIMITS.entries} fields and items in all`
        }
        const itemPath = Array.isArray(value) ? `${path}[${key}]` : `${path}${path === '' ? '' : '.'}${key}`
        if (typeof key === 'string') {
          const problem = characterProblem(key)
          if (problem !== null) {
            return `${problem.replace(/^must not/, 'must not hold field names that')}${where(path)}`
          }
          bytes += jsonStringBytes(key) + 1
        }
        bytes += 1
        stack.push({ value: item, depth: depth + 1, path: itemPath.length > 200 ? path : itemPath })
      }
    } else {
      bytes += String(value).length
    }
    if (bytes > DATA_LIMITS.bytes) {
      return `must be at most ${DATA_LIMITS.bytes} bytes once serialized as JSON`
    }
  }
  return null
}

/** The UTF-8 bytes of `text` as a JSON string: quotes, escapes and multi-byte characters counted. */
function jsonStringBytes(text: string): number {
  let bytes = 2
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20)
      bytes += code === 0x0a || code === 0x0d || code === 0x09 || code === 0x08 || code === 0x0c ? 2 : 6
    else if (code === 0x22 || code === 0x5c) bytes += 2
    else if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}
