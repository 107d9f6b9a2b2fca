import { FormSchema } from '../../../schemas.js'
import type { ContentService } from '../../../services/content.js'
import { listRoute } from './list-route.js'

/** `GET /api/v1/forms`: forms oldest first, filterable by `active`. */
export const formsRoute = (content: ContentService) =>
  listRoute({
    url: '/forms',
    operationId: 'listForms',
    tag: 'Forms',
    summary: 'List forms',
    description: 'The forms of the site, oldest first (ties broken by id), filterable by `active`.',
    permission: 'forms:read',
    item: FormSchema,
    filter: 'active',
    view: (_params, versions) => ({ version: versions.forms }),
    list: ({ page, pageSize, filter }, _params, { version }) =>
      content.listForms({ page, pageSize, active: filter }, version),
  })
