import { type Static, Type } from '@sinclair/typebox'
import type { Selectable } from 'kysely'
import type { SubmissionsTable } from '../db/tables.js'
import { describeJsonType, isObject, type JsonObject } from '../json.js'
import { characterProblem, DATA_LIMITS, FIELD_LIMITS, textProblem } from '../limits.js'
import { Id, NullableString, Timestamp } from './api-fields.js'
import { importFields, kindField, RecordId, Refusal, recordReader } from './record-reader.js'

/**
 * A submission to a form: its API schema, the one reader of a submission as given (an import
 * record) with the rules of its `data` and notes, and its presenters. Intake reads posts with the
 * form's own field rules (`form.ts`).
 */

export const SubmissionSchema = Type.Object(
  {
    id: Id('submission'),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'the submitted fields, by field name',
      examples: [{ name: 'Ada', message: 'Hello' }],
    }),
    ipAddress: NullableString('address the submission came from'),
    userAgent: NullableString("the submitting browser's User-Agent"),
    referrer: NullableString('the page the form was submitted from'),
    submittedBy: NullableString('who submitted it, when known'),
    isRead: Type.Boolean({ description: 'marked as read by an administrator' }),
    isStarred: Type.Boolean({ description: 'starred by an administrator' }),
    notes: NullableString("administrators' notes"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  {
    $id: 'Submission',
    description: 'One submission of a form. Submissions hold personal data.',
    additionalProperties: false,
  },
)
export type Submission = Static<typeof SubmissionSchema>

/** Reads a submission record; a missing id is generated only when the submission is written. */
export const readSubmission = recordReader(
  Type.Object({
    ...kindField('submission'),
    ...importFields(Type.Pick(SubmissionSchema, ['id']).properties),
    // The API lists submissions under their form; an import names the form in each record.
    formId: { ...RecordId, minLength: 1 },
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
  {
    data: {
      placeholder: {},
      check: (value) => {
        if (!isObject(value)) return new Refusal(`must be a JSON object (got ${describeJsonType(value)})`)
        const problem = dataProblem(value)
        return problem === null ? value : new Refusal(problem)
      },
    },
  },
)

/** A submission record completed with its defaults; `id` stays absent when the record has none. */
export type SubmissionDraft = ReturnType<typeof readSubmission>['draft']

/** The longest note an administrator may keep on a submission (the one table of limits says). */
export const MAX_NOTES_LENGTH = FIELD_LIMITS.notes

/**
 * Notes as an administrator typed them: blank notes are none (null), `undefined` leaves them as
 * they are. `problem` is a sentence (`Notes must be at most …`), by the limits an import applies.
 */
export function readNotes(notes: string | null | undefined): {
  notes: string | null | undefined
  problem: string | null
} {
  const value = notes?.trim() === '' ? null : notes
  const problem = typeof value === 'string' ? textProblem(value, MAX_NOTES_LENGTH) : null
  return { notes: value, problem: problem === null ? null : `Notes ${problem}` }
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

/** A submission as the API lists it. */
export function presentSubmission(row: Selectable<SubmissionsTable>): Submission {
  return {
    id: row.id,
    data: JSON.parse(row.data) as Record<string, unknown>,
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    referrer: row.referrer,
    submittedBy: row.submitted_by,
    isRead: row.is_read === 1,
    isStarred: row.is_starred === 1,
    notes: row.notes,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

const quote = (value: string) => JSON.stringify(value)
const quoteOrNull = (value: string | null) => (value === null ? 'null' : JSON.stringify(value))

/**
 * The stored `data` text as it goes on the wire. Every way in writes it as `JSON.stringify` of an
 * object (the importer does; nothing else writes it), which is exactly what the response
 * serializer would write for it again, so it is spliced in as it is. Text without that shape (an
 * operator's own SQL may store anything) takes the long way, parsed and written again, and fails
 * loudly when it is not JSON; text shaped `{…}` is trusted to be what Lectern wrote.
 */
function dataJson(data: string): string {
  const first = data.charCodeAt(0)
  const last = data.charCodeAt(data.length - 1)
  // `{` … `}` with no whitespace at either end: the shape `JSON.stringify` gives an object.
  if (first === 0x7b && last === 0x7d) return data
  return JSON.stringify(JSON.parse(data) as unknown)
}

/**
 * A submission as JSON text: byte for byte `JSON.stringify(presentSubmission(row))`, in the schema's
 * field order (property tests hold it equal to that and to the schema-compiled serializer), but
 * without parsing `data` and writing it out again. A page of 100 submissions costs about 40% less
 * CPU this way. Unlike the compiled serializer, it keeps `data` fields whose names hold a line
 * break (the serializer's `^(.*)$` name pattern does not match them and dropped them).
 */
export function submissionJson(row: Selectable<SubmissionsTable>): string {
  return (
    '{"id":' +
    quote(row.id) +
    ',"data":' +
    dataJson(row.data) +
    ',"ipAddress":' +
    quoteOrNull(row.ip_address) +
    ',"userAgent":' +
    quoteOrNull(row.user_agent) +
    ',"referrer":' +
    quoteOrNull(row.referrer) +
    ',"submittedBy":' +
    quoteOrNull(row.submitted_by) +
    ',"isRead":' +
    (row.is_read === 1 ? 'true' : 'false') +
    ',"isStarred":' +
    (row.is_starred === 1 ? 'true' : 'false') +
    ',"notes":' +
    quoteOrNull(row.notes) +
    ',"createdAt":' +
    quote(row.created_at) +
    ',"updatedAt":' +
    quote(row.updated_at) +
    '}'
  )
}
