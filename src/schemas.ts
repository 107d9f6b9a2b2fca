import { type Static, type TSchema, Type } from '@sinclair/typebox'

/**
 * One schema per resource. Field order here is the order on the wire: the HTTP layer compiles
 * these into the response serializers, and the OpenAPI document is generated from them.
 */
const Timestamp = Type.String({
  format: 'date-time',
  description: 'UTC, second precision',
  examples: ['2024-01-05T10:00:00Z'],
})
// `type: [string, null]` rather than `anyOf`: the serializer compiles it to a plain check instead of a
// schema validation per field, and OpenAPI 3.1 reads it the same way.
const NullableString = Type.Unsafe<string | null>({ type: ['string', 'null'] })

export const FormSchema = Type.Object(
  {
    id: Type.String({ examples: ['form_8mXqz1Lr0aT2kVb9PcW4'] }),
    title: Type.String(),
    description: NullableString,
  },
  { title: 'Form', additionalProperties: false },
)
export type Form = Static<typeof FormSchema>

export const SubmissionSchema = Type.Object(
  {
    id: Type.String(),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'the submitted fields' }),
    ipAddress: NullableString,
    userAgent: NullableString,
    referrer: NullableString,
    submittedBy: NullableString,
    isRead: Type.Boolean(),
    isStarred: Type.Boolean(),
    notes: NullableString,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Submission', additionalProperties: false },
)
export type Submission = Static<typeof SubmissionSchema>

export const PageSchema = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    slug: Type.String(),
    path: Type.String({ pattern: '^/' }),
    pageType: Type.String({ examples: ['page'] }),
    isPublished: Type.Boolean(),
    publishedAt: Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Page', additionalProperties: false },
)
export type Page = Static<typeof PageSchema>

export const RedirectTypeSchema = Type.Union([Type.Literal('permanent'), Type.Literal('temporary')])
export type RedirectType = Static<typeof RedirectTypeSchema>

export const RedirectSchema = Type.Object(
  {
    id: Type.String(),
    fromPath: Type.String({ pattern: '^/' }),
    toPath: Type.String({ pattern: '^/' }),
    type: RedirectTypeSchema,
    isActive: Type.Boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Redirect', additionalProperties: false },
)
export type Redirect = Static<typeof RedirectSchema>

export const ListMetaSchema = Type.Object(
  {
    total: Type.Integer({ minimum: 0 }),
    page: Type.Integer({ minimum: 1 }),
    pageSize: Type.Integer({ minimum: 1, maximum: 100 }),
    totalPages: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
)
export type ListMeta = Static<typeof ListMetaSchema>

/** The list envelope around any item schema. */
export function listOf<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: ListMetaSchema }, { additionalProperties: false })
}

export const ErrorSchema = Type.Object(
  {
    error: Type.String({
      description: 'error type (code form by default, phrase form with ERROR_STYLE=phrase)',
    }),
    message: Type.String(),
  },
  { $id: 'Error', additionalProperties: false },
)

/** A page of items plus the total that matched, as services return it. */
export interface PageOf<T> {
  items: T[]
  total: number
}

/** Paging and filters shared by the list endpoints; `undefined` filter means "all". */
export interface ListOptions {
  page: number
  pageSize: number
}
