export { type AllParams, Forms, Lectern, type LecternOptions, type List, Pages, Redirects } from './client.js'
export {
  AuthenticationError,
  ERROR_TYPES,
  type ErrorType,
  InvalidRequestError,
  LecternError,
  MethodNotAllowedError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  ServiceUnavailableError,
  type UnexpectedResponse,
} from './errors.js'
export type {
  Error as ErrorBody,
  Form,
  ListFormSubmissionsParams,
  ListFormSubmissionsResponse,
  ListFormsParams,
  ListFormsResponse,
  ListMeta,
  ListPagesParams,
  ListPagesResponse,
  ListRedirectsParams,
  ListRedirectsResponse,
  Page,
  Redirect,
  Submission,
} from './schema.js'
export type { FetchFunction, RateLimitState, RequestOptions, RetryOptions } from './transport.js'
