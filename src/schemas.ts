import { type Static, type TSchema, Type } from '@sinclair/typebox'

/**
 * The API's schemas, the source of the OpenAPI document. Each resource's schema lives in its
 * module under `resources/` (with its reader and presenter) and is gathered here; the list
 * envelope and the error body are the API's own. Field order is the order on the wire: the HTTP
 * layer compiles these into the response serializers. Each `$id` is its name among the
 * document's components.
 */
export {
  FieldDefinitionSchema,
  type Form,
  type FormDetail,
  FormDetailSchema,
  FormSchema,
} from './resources/form.js'
export { type Page, PageSchema } from './resources/page.js'
export { type Redirect, RedirectSchema, type RedirectType, RedirectTypeSchema } from './resources/redirect.js'
export { type Submission, SubmissionSchema } from './resources/submission.js'

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
