import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { Selectable } from 'kysely'
import type { FormsTable } from '../db/tables.js'
import { FIELD_LIMITS } from '../limits.js'
import { Id, NullableString, Timestamp } from './api-fields.js'
import { isSafeEmail } from './email-address.js'
import { importFields, kindField, problemsByField, Refusal, recordReader } from './record-reader.js'

/**
 * A form's intake: the settings that let a site's own HTML forms post to Lectern, and the
 * definitions of the fields it expects. One module, so the importer, the API and the dashboard
 * check them with the same rules and say the same things.
 */

export const FIELD_TYPES = [
  'text',
  'textarea',
  'email',
  'url',
  'tel',
  'number',
  'date',
  'checkbox',
  'select',
] as const
export type FieldType = (typeof FIELD_TYPES)[number]

/** Limits of what a post may carry; the intake's body reader enforces them while it reads. */
export const INTAKE_LIMITS = {
  /** Bytes of a request body. */
  bodyBytes: 65_536,
  /** Fields of one post, control fields (`_…`) not counted. */
  fields: 100,
  /** Characters of a field's name. */
  nameLength: 100,
  /** Characters of a field's value. */
  valueLength: 10_000,
} as const

/** How long spam is kept before it is deleted, in days. */
export const SPAM_RETENTION_DAYS = 30

const MAX_ORIGINS = 50
const MAX_EMAILS = 20
const MAX_OPTIONS = 200

export const FieldDefinitionSchema = Type.Object(
  {
    name: Type.String({ description: 'the name the HTML form posts the field under', examples: ['email'] }),
    label: Type.String({ description: 'what the field is called on the page', examples: ['Your email'] }),
    type: Type.Union(
      FIELD_TYPES.map((type) => Type.Literal(type)),
      { description: 'what the value must be' },
    ),
    required: Type.Boolean({ description: 'a missing or blank value is refused' }),
    options: Type.Unsafe<string[] | null>({
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'the values a `select` accepts; null for other types',
    }),
    maxLength: Type.Unsafe<number | null>({
      type: ['integer', 'null'],
      minimum: 1,
      description: 'the most characters a value may have; null: no cap of its own',
    }),
  },
  { $id: 'FormField', description: 'A field a form expects.', additionalProperties: false },
)
export type FieldDefinition = Static<typeof FieldDefinitionSchema>

/** A form's intake settings with every default filled in, as stored and as services use them. */
export interface IntakeSettings {
  enabled: boolean
  allowedOrigins: string[]
  redirectUrl: string | null
  storeIpAddress: boolean
  retentionDays: number | null
  notifyEmails: string[]
  fields: FieldDefinition[]
}

export const DEFAULT_INTAKE: IntakeSettings = Object.freeze({
  enabled: false,
  allowedOrigins: [],
  redirectUrl: null,
  storeIpAddress: true,
  retentionDays: null,
  notifyEmails: [],
  fields: [],
})

/**
 * The intake settings as given (the import format's `intake` object, the dashboard's editor):
 * every member optional, its default applying when absent.
 */
export const IntakeSettingsInputSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    allowedOrigins: Type.Optional(Type.Array(Type.String())),
    redirectUrl: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    storeIpAddress: Type.Optional(Type.Boolean()),
    retentionDays: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    notifyEmails: Type.Optional(Type.Array(Type.String())),
    fields: Type.Optional(Type.Array(Type.Unknown())),
  },
  { $id: 'FormIntakeSettings', additionalProperties: false },
)

const EMAIL = /^[^\s@]+@[^\s@]+$/
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** `value` as an origin (`https://www.example.com`), or null when it is not exactly one. */
export function asOrigin(value: string): string | null {
  try {
    const url = new URL(value)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
    return url.origin === value ? value : null
  } catch {
    return null
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

/** Whether `value` is a place a browser may be sent: an absolute http(s) URL or a path of this site. */
export function isRedirectTarget(value: string): boolean {
  if (/[\s\\]/.test(value) || value.length > 2000) return false
  if (value.startsWith('/')) return !value.startsWith('//')
  return isHttpUrl(value)
}

const describe = (value: unknown) => JSON.stringify(value)?.slice(0, 80) ?? String(value)

/**
 * Reads intake settings as given, filling in the defaults. Returns the settings and every problem
 * found, each naming its setting (`allowedOrigins[1] must be an origin…`); settings with problems
 * must not be stored. A setting of the wrong type is named for its type alone, and the others are
 * still checked for what their type cannot say, so that one run lists everything to fix.
 */
export function readIntakeSettings(input: unknown): { settings: IntakeSettings; problems: string[] } {
  const problems: string[] = []
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { settings: { ...DEFAULT_INTAKE }, problems: ['must be a JSON object'] }
  }
  const typeProblems = new Set<string>()
  for (const error of Value.Errors(IntakeSettingsInputSchema, input)) {
    const where = error.path.slice(1).replaceAll('/', '.') || 'intake'
    typeProblems.add(`${where}: ${error.message.toLowerCase()} (got ${describe(error.value)})`)
  }
  problems.push(...typeProblems)
  const given = wellTypedSettings(input as Record<string, unknown>)
  const settings: IntakeSettings = {
    enabled: given.enabled ?? DEFAULT_INTAKE.enabled,
    allowedOrigins: given.allowedOrigins ?? [],
    redirectUrl: given.redirectUrl ?? null,
    storeIpAddress: given.storeIpAddress ?? DEFAULT_INTAKE.storeIpAddress,
    retentionDays: given.retentionDays ?? null,
    notifyEmails: given.notifyEmails ?? [],
    fields: [],
  }
  if (settings.allowedOrigins.length > MAX_ORIGINS)
    problems.push(`allowedOrigins may list at most ${MAX_ORIGINS} origins`)
  settings.allowedOrigins.forEach((origin, index) => {
    if (asOrigin(origin) === null)
      problems.push(
        `allowedOrigins[${index}] must be an origin such as https://www.example.com, with no path (got ${describe(origin)})`,
      )
  })
  if (settings.redirectUrl !== null && !isRedirectTarget(settings.redirectUrl))
    problems.push(
      `redirectUrl must be an absolute http(s) URL or a path starting with / (got ${describe(settings.redirectUrl)})`,
    )
  if (settings.retentionDays !== null && (settings.retentionDays < 1 || settings.retentionDays > 36_500))
    problems.push(`retentionDays must be an integer from 1 to 36500, or null (got ${settings.retentionDays})`)
  if (settings.notifyEmails.length > MAX_EMAILS)
    problems.push(`notifyEmails may list at most ${MAX_EMAILS} addresses`)
  settings.notifyEmails.forEach((email, index) => {
    if (!isSafeEmail(email))
      problems.push(
        `notifyEmails[${index}] must be one plain email address such as owner@example.com (got ${describe(email)})`,
      )
  })
  const fields = given.fields ?? []
  if (fields.length > INTAKE_LIMITS.fields)
    problems.push(`fields may define at most ${INTAKE_LIMITS.fields} fields`)
  const names = new Set<string>()
  fields.forEach((field, index) => {
    const read = readFieldDefinition(field, `fields[${index}]`, problems)
    if (read === null) return
    if (names.has(read.name)) problems.push(`fields[${index}].name '${read.name}' is defined twice`)
    names.add(read.name)
    settings.fields.push(read)
  })
  return { settings, problems }
}

/**
 * The settings of `input` whose own value has its schema's type; the others are left out, their
 * type problem being all there is to say of them (their rules would only repeat it).
 */
function wellTypedSettings(input: Record<string, unknown>): Static<typeof IntakeSettingsInputSchema> {
  const given: Record<string, unknown> = {}
  for (const [name, schema] of Object.entries(IntakeSettingsInputSchema.properties)) {
    if (Object.hasOwn(input, name) && Value.Check(schema, input[name])) given[name] = input[name]
  }
  return given as Static<typeof IntakeSettingsInputSchema>
}

function readFieldDefinition(value: unknown, where: string, problems: string[]): FieldDefinition | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${where} must be a JSON object (got ${describe(value)})`)
    return null
  }
  const field = value as Record<string, unknown>
  const before = problems.length
  for (const key of Object.keys(field)) {
    if (!['name', 'label', 'type', 'required', 'options', 'maxLength'].includes(key))
      problems.push(`${where} has an unknown member '${key}'`)
  }
  const { name, label, type, required, options, maxLength } = field
  if (typeof name !== 'string' || name === '' || name.length > INTAKE_LIMITS.nameLength)
    problems.push(`${where}.name must be a string of 1 to ${INTAKE_LIMITS.nameLength} characters`)
  else if (name.startsWith('_'))
    problems.push(`${where}.name must not begin with _ (such names are control fields, never stored)`)
  if (label !== undefined && (typeof label !== 'string' || label.length > 200))
    problems.push(`${where}.label must be a string of at most 200 characters`)
  if (!FIELD_TYPES.includes(type as FieldType))
    problems.push(`${where}.type must be one of ${FIELD_TYPES.join(', ')} (got ${describe(type)})`)
  if (required !== undefined && typeof required !== 'boolean')
    problems.push(`${where}.required must be true or false (got ${describe(required)})`)
  if (type === 'select') {
    if (
      !Array.isArray(options) ||
      options.length === 0 ||
      options.length > MAX_OPTIONS ||
      !options.every((option) => typeof option === 'string')
    )
      problems.push(`${where}.options must be an array of 1 to ${MAX_OPTIONS} strings for a select`)
  } else if (options !== undefined && options !== null) {
    problems.push(`${where}.options is only for a select`)
  }
  if (
    maxLength !== undefined &&
    maxLength !== null &&
    !(
      Number.isInteger(maxLength) &&
      (maxLength as number) >= 1 &&
      (maxLength as number) <= INTAKE_LIMITS.valueLength
    )
  )
    problems.push(`${where}.maxLength must be an integer from 1 to ${INTAKE_LIMITS.valueLength}, or null`)
  if (problems.length > before) return null
  return {
    name: name as string,
    label: (label as string | undefined) ?? (name as string),
    type: type as FieldType,
    required: (required as boolean | undefined) ?? false,
    options: type === 'select' ? (options as string[]) : null,
    maxLength: (maxLength as number | null | undefined) ?? null,
  }
}

/** Settings as stored in `forms.intake` (JSON text, or null for the defaults). */
export function parseStoredIntake(text: string | null): IntakeSettings {
  if (text === null) return { ...DEFAULT_INTAKE }
  return { ...DEFAULT_INTAKE, ...(JSON.parse(text) as Partial<IntakeSettings>) }
}

/** A posted value: text from a form, or what a JSON body may hold. */
export type PostedValue = string | number | boolean | (string | number | boolean)[]

const isBlank = (value: string | number | boolean) =>
  typeof value === 'string' ? value.trim() === '' : value === false

/**
 * What is wrong with the posted `data` by the form's field definitions: field name → problem.
 * Fields the form does not define are not checked.
 */
export function fieldProblems(
  fields: readonly FieldDefinition[],
  data: Readonly<Record<string, PostedValue>>,
): Record<string, string> {
  const problems: Record<string, string> = {}
  for (const field of fields) {
    const given = Object.hasOwn(data, field.name) ? data[field.name] : undefined
    const values = (given === undefined ? [] : Array.isArray(given) ? given : [given]).filter(
      (value) => !isBlank(value),
    )
    if (values.length === 0) {
      if (field.required) problems[field.name] = 'is required'
      continue
    }
    for (const value of values) {
      const problem = valueProblem(field, value)
      if (problem !== null) {
        problems[field.name] = problem
        break
      }
    }
  }
  return problems
}

function valueProblem(field: FieldDefinition, value: string | number | boolean): string | null {
  const text = String(value)
  if (field.maxLength !== null && text.length > field.maxLength)
    return `must be at most ${field.maxLength} characters`
  switch (field.type) {
    case 'email':
      return EMAIL.test(text) ? null : 'must be an email address'
    case 'url':
      return isHttpUrl(text) ? null : 'must be an absolute http(s) URL'
    case 'number':
      return typeof value === 'number' || NUMBER.test(text) ? null : 'must be a number'
    case 'date':
      return isDate(text) ? null : 'must be a date (YYYY-MM-DD)'
    case 'select':
      return field.options?.includes(text) ? null : `must be one of ${(field.options ?? []).join(', ')}`
    default:
      return null
  }
}

function isDate(text: string): boolean {
  const match = DATE.exec(text)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

export const FormSchema = Type.Object(
  {
    id: Id('form'),
    title: Type.String({ examples: ['Contact us'] }),
    description: NullableString('what the form is for, if the site gave one'),
  },
  { $id: 'Form', description: 'A form of the site.', additionalProperties: false },
)
export type Form = Static<typeof FormSchema>

export const FormDetailSchema = Type.Object(
  {
    id: Id('form'),
    title: Type.String({ examples: ['Contact us'] }),
    description: NullableString('what the form is for, if the site gave one'),
    fields: Type.Array(FieldDefinitionSchema, {
      description: 'the fields the form expects, in order; empty when it defines none',
    }),
    intake: Type.Object(
      {
        enabled: Type.Boolean({
          description: 'the form takes public posts now (its intake is on and it is active)',
        }),
        url: Type.String({
          format: 'uri',
          description: 'the absolute address a site posts the form to',
          examples: ['https://lectern.example.com/f/form_8mXqz1Lr0aT2kVb9PcW4'],
        }),
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'FormDetail',
    description: 'A form with its field definitions and where a site posts it, so a site can render it.',
    additionalProperties: false,
  },
)
export type FormDetail = Static<typeof FormDetailSchema>

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
    ...importFields({ createdAt: Timestamp, updatedAt: Timestamp }),
  }),
  (draft) => draft,
  {
    intake: {
      placeholder: undefined,
      check: (value) => {
        const { settings, problems } = readIntakeSettings(value)
        return problems.length === 0 ? settings : new Refusal(problems.join('; '))
      },
    },
  },
)

/** A form record completed with its defaults: the API's fields, `isActive` and timestamps. */
export type FormDraft = ReturnType<typeof readForm>['draft']

/** A form as the dashboard's editor sends it; text as typed. */
export interface FormInput {
  title: string
  /** Blank means none. */
  description: string
  isActive: boolean
}

/** The fields of a form the editor shows, in its order, with the names its problems start with. */
export const FORM_FIELD_LABELS = { title: 'Title', description: 'Description' } as const
export type FormField = keyof typeof FORM_FIELD_LABELS

/**
 * Reads a form as the editor sends it, surrounding whitespace trimmed, by {@link readForm}.
 * `fields` holds a sentence per wrong field; the value is only good to store when there is none.
 */
export function readFormInput(input: FormInput): {
  value: { title: string; description: string | null; isActive: boolean }
  fields: Partial<Record<FormField, string>>
} {
  const description = input.description.trim()
  const { draft, problems } = readForm({
    title: input.title.trim(),
    description: description === '' ? null : description,
    isActive: input.isActive,
  })
  return {
    value: { title: draft.title, description: draft.description, isActive: draft.isActive },
    fields: problemsByField(problems, FORM_FIELD_LABELS),
  }
}

/** A form as the API lists it. */
export function presentForm(row: Pick<Selectable<FormsTable>, 'id' | 'title' | 'description'>): Form {
  return { id: row.id, title: row.title, description: row.description }
}
