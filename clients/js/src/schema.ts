// Generated from openapi.json by scripts/client-types.js (`npm run openapi`): do not edit.

/**
 * The body of every error response.
 */
export interface Error {
  /**
   * error type (code form by default, phrase form with ERROR_STYLE=phrase)
   */
  error: string
  /**
   * what went wrong, for people
   */
  message: string
}

/**
 * A form of the site.
 */
export interface Form {
  /**
   * opaque identifier
   */
  id: string
  title: string
  /**
   * what the form is for, if the site gave one
   */
  description: string | null
}

/**
 * Where a page of a list stands.
 */
export interface ListMeta {
  /**
   * items that match, on all pages
   */
  total: number
  /**
   * this page
   */
  page: number
  /**
   * items per page
   */
  pageSize: number
  /**
   * ceil(total / pageSize); 0 when total is 0
   */
  totalPages: number
}

/**
 * A form with its field definitions and where a site posts it, so a site can render it.
 */
export interface FormDetail {
  /**
   * opaque identifier
   */
  id: string
  title: string
  /**
   * what the form is for, if the site gave one
   */
  description: string | null
  /**
   * the fields the form expects, in order; empty when it defines none
   */
  fields: FormField[]
  intake: {
    /**
     * the form takes public posts now (its intake is on and it is active)
     */
    enabled: boolean
    /**
     * the absolute address a site posts the form to
     */
    url: string
  }
}

/**
 * A field a form expects.
 */
export interface FormField {
  /**
   * the name the HTML form posts the field under
   */
  name: string
  /**
   * what the field is called on the page
   */
  label: string
  /**
   * what the value must be
   */
  type: 'text' | 'textarea' | 'email' | 'url' | 'tel' | 'number' | 'date' | 'checkbox' | 'select'
  /**
   * a missing or blank value is refused
   */
  required: boolean
  /**
   * the values a `select` accepts; null for other types
   */
  options: string[] | null
  /**
   * the most characters a value may have; null: no cap of its own
   */
  maxLength: number | null
}

/**
 * One submission of a form. Submissions hold personal data.
 */
export interface Submission {
  /**
   * opaque identifier
   */
  id: string
  /**
   * the submitted fields, by field name
   */
  data: {
    [k: string]: unknown | undefined
  }
  /**
   * address the submission came from
   */
  ipAddress: string | null
  /**
   * the submitting browser's User-Agent
   */
  userAgent: string | null
  /**
   * the page the form was submitted from
   */
  referrer: string | null
  /**
   * who submitted it, when known
   */
  submittedBy: string | null
  /**
   * marked as read by an administrator
   */
  isRead: boolean
  /**
   * starred by an administrator
   */
  isStarred: boolean
  /**
   * administrators' notes
   */
  notes: string | null
  /**
   * UTC, second precision
   */
  createdAt: string
  /**
   * UTC, second precision
   */
  updatedAt: string
}

/**
 * A page built with the page builder.
 */
export interface Page {
  /**
   * opaque identifier
   */
  id: string
  title: string
  slug: string
  /**
   * the page's path on the site
   */
  path: string
  /**
   * kind of page
   */
  pageType: string
  isPublished: boolean
  /**
   * when the page was published (UTC, second precision); null if never
   */
  publishedAt: string | null
  /**
   * UTC, second precision
   */
  createdAt: string
  /**
   * UTC, second precision
   */
  updatedAt: string
}

/**
 * A URL redirect of the site.
 */
export interface Redirect {
  /**
   * opaque identifier
   */
  id: string
  /**
   * the exact path that is redirected (case-sensitive)
   */
  fromPath: string
  /**
   * where it leads; the query string is carried over
   */
  toPath: string
  /**
   * permanent answers 301, temporary answers 302
   */
  type: 'permanent' | 'temporary'
  /**
   * only active redirects apply
   */
  isActive: boolean
  /**
   * UTC, second precision
   */
  createdAt: string
  /**
   * UTC, second precision
   */
  updatedAt: string
}

export interface ListFormsParams {
  /**
   * page number, from 1
   */
  page?: number
  /**
   * items per page
   */
  pageSize?: number
  /**
   * true: only active; false: only inactive
   */
  active?: boolean
}

export interface ListFormsResponse {
  data: Form[]
  meta: ListMeta
}

export interface GetFormResponse {
  data: FormDetail
}

export interface ListFormSubmissionsParams {
  /**
   * page number, from 1
   */
  page?: number
  /**
   * items per page
   */
  pageSize?: number
  /**
   * only submissions created at or after this time: an ISO 8601 date-time with `Z` or an offset (without one it is read as UTC)
   */
  since?: string
  /**
   * only submissions created before this time (exclusive), written like `since`; a sync job passes its previous run's `until` as `since`
   */
  until?: string
  /**
   * true: only read submissions; false: only unread
   */
  isRead?: boolean
  /**
   * true: only starred submissions; false: only unstarred
   */
  isStarred?: boolean
}

export interface ListFormSubmissionsResponse {
  data: Submission[]
  meta: ListMeta
}

export interface ListPagesParams {
  /**
   * page number, from 1
   */
  page?: number
  /**
   * items per page
   */
  pageSize?: number
  /**
   * true: only published pages; false: only unpublished
   */
  published?: boolean
}

export interface ListPagesResponse {
  data: Page[]
  meta: ListMeta
}

export interface ListRedirectsParams {
  /**
   * page number, from 1
   */
  page?: number
  /**
   * items per page
   */
  pageSize?: number
  /**
   * true: only active; false: only inactive
   */
  active?: boolean
}

export interface ListRedirectsResponse {
  data: Redirect[]
  meta: ListMeta
}
