import { Type } from '@sinclair/typebox'
import { SubmissionSchema } from '../../../schemas.js'
import type { ContentService } from '../../../services/content.js'
import { listRoute } from './list-route.js'

/** `GET /api/v1/forms/{id}/submissions`: one form's submissions, newest first; 404 for an unknown form. */
export const submissionsRoute = (content: ContentService) =>
  listRoute({
    url: '/forms/:id/submissions',
    summary: "List a form's submissions",
    permission: 'submissions:read',
    item: SubmissionSchema,
    params: Type.Object({ id: Type.String({ description: 'form id' }) }),
    list: ({ page, pageSize }, params) => content.listSubmissionsForForm(params.id, { page, pageSize }),
  })
