import { Type } from '@sinclair/typebox'
import { NotFoundError } from '../../../errors.js'
import { isSafeId } from '../../../ids.js'
import { type SubmissionFilters, SubmissionSchema } from '../../../schemas.js'
import type { ContentService } from '../../../services/content.js'
import { parseSubmissionFilters, SUBMISSION_FILTER_PROPERTIES } from '../../params.js'
import { listRoute } from './list-route.js'

/** `GET /api/v1/forms/{id}/submissions`: one form's submissions, newest first; 404 for an unknown form. */
export const submissionsRoute = (content: ContentService) =>
  listRoute({
    url: '/forms/:id/submissions',
    operationId: 'listFormSubmissions',
    tag: 'Forms',
    summary: "List a form's submissions",
    description:
      "One form's submissions, newest first (ties broken by id). A form that does not exist is a 404 naming it; one without submissions is an empty list.\n\n`since` and `until` select a window of `createdAt` (`since` included, `until` excluded), `isRead` and `isStarred` the flags; `meta.total` counts what the filters select. A sync job reads `since=<its last run's until>&until=<a moment ago>` page by page: submissions arriving meanwhile fall outside the window, so no page shifts under it.",
    permission: 'submissions:read',
    item: SubmissionSchema,
    params: Type.Object({ id: Type.String({ description: 'form id', examples: ['form_contact'] }) }),
    extraQuery: {
      properties: SUBMISSION_FILTER_PROPERTIES,
      parse: parseSubmissionFilters,
      cacheKey: (filters: SubmissionFilters) =>
        `${filters.since ?? ''}|${filters.until ?? ''}|${filters.isRead ?? ''}|${filters.isStarred ?? ''}`,
    },
    // The form's own version: writes to other forms, pages or redirects leave its pages alone. It
    // is read with the key, in the same statement (`formParam`), after the request arrived.
    formParam: 'id',
    view: (params, _versions, form) => {
      // No form has an id outside the id alphabet: answered without a query, so no NUL or other
      // hostile text reaches the database.
      if (!isSafeId(params.id)) throw new NotFoundError(`Form '${params.id}' not found`)
      // Read by the pipeline for every id of the id alphabet, since the route names `formParam`.
      if (form === undefined) throw new Error('the form named by formParam was not read with the key')
      if (!form.exists) throw new NotFoundError(`Form '${params.id}' not found`)
      return form
    },
    // Written as JSON text straight from the stored rows: a page of 100 submissions is large.
    listJson: ({ page, pageSize }, params, state, filters) =>
      content.listSubmissionsJsonForForm(params.id, { page, pageSize }, state, filters),
  })
