import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { FieldDefinitionSchema } from './resources/form.js'

export { FieldDefinitionSchema }

/**
 * One schema per resource. Field order here is the order on the wire: the HTTP layer compiles
 * these into the response serializers, and the OpenAPI document is generated from them. Each
 * resource's `$id` is its name among the document's components.
 */
const Timestamp = Type.String({
  format: 'date-time',
  description: 'UTC, second precision',
  examples: ['2024-01-05T10:00:00Z'],
})
// `type: [string, null]` rather than `anyOf`: the serializer compiles it to a plain check instead of a
// schema validation per field, and OpenAPI 3.1 reads it the same way.
const NullableString = (description: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], description })
const Id = (prefix: string) =>
  Type.String({ description: 'opaque identifier', examples: [`${prefix}_8mXqz1Lr0aT2kVb9PcW4`] })
const SitePath = (description: string, example: string) =>
  Type.String({ pattern: '^/', description, examples: [example] })

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

export const PageSchema = Type.Object(
  {
    id: Id('page'),
    title: Type.String({ examples: ['About us'] }),
    slug: Type.String({ examples: ['about-us'] }),
    path: SitePath("the page's path on the site", '/about-us'),
    pageType: Type.String({ description: 'kind of page', examples: ['page'] }),
    isPublished: Type.Boolean(),
    publishedAt: Type.Unsafe<string | null>({
      type: ['string', 'null'],
      format: 'date-time',
      description: 'when the page was published (UTC, second precision); null if never',
      examples: ['2024-01-05T10:00:00Z'],
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Page', description: 'A page built with the page builder.', additionalProperties: false },
)
export type Page = Static<typeof PageSchema>

export const RedirectTypeSchema = Type.Union([Type.Literal('permanent'), Type.Literal('temporary')], {
  description: 'permanent answers 301, temporary answers 302',
})
export type RedirectType = Static<typeof RedirectTypeSchema>

export const RedirectSchema = Type.Object(
  {
    id: Id('redirect'),
    fromPath: SitePath('the exact path that is redirected (case-sensitive)', '/old-about'),
    toPath: SitePath('where it leads; the query string is carried over', '/about-us'),
    type: RedirectTypeSchema,
    isActive: Type.Boolean({ description: 'only active redirects apply' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Redirect', description: 'A URL redirect of the site.', additionalProperties: false },
)
export type Redirect = Static<typeof RedirectSchema>

export const ListMetaSchema = Type.Object(
  {
    total: Type.Integer({ minimum: 0, description: 'items that match, on all pages' }),
    page: Type.Integer({ minimum: 1, description: 'this page' }),
    pageSize: Type.Integer({ minimum: 1, maximum: 100, description: 'items per page' }),
    totalPages: Type.Integer({ minimum: 0, description: 'ceil(total / pageSize); 0 when total is 0' }),
  },
  { $id: 'ListMeta', description: 'Where a page of a list stands.', additionalProperties: false },
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
    message: Type.String({ description: 'what went wrong, for people' }),
  },
  { $id: 'Error', description: 'The body of every error response.', additionalProperties: false },
)

/** A page of items plus the total that matched, as services return it. */
export interface PageOf<T> {
  items: T[]
  total: number
}

/** The page asked for: 1-based page number and page size, both already checked. */
export interface ListOptions {
  page: number
  pageSize: number
}

/**
 * The filters of a form's submissions, already checked: a `createdAt` window (`since` inclusive,
 * `until` exclusive, canonical timestamps) and the two flags. Absent fields do not filter.
 */
export interface SubmissionFilters {
  since?: string
  until?: string
  isRead?: boolean
  isStarred?: boolean
}
