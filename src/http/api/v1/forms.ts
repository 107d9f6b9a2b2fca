import { FormSchema } from '../../../schemas.js'
import type { ContentService } from '../../../services/content.js'
import { listRoute } from './list-route.js'

/** `GET /api/v1/forms`: forms oldest first, filterable by `active`. */
export const formsRoute = (content: ContentService) =>
  listRoute({
    url: '/forms',
    summary: 'List forms',
    permission: 'forms:read',
    item: FormSchema,
    filter: 'active',
    list: ({ page, pageSize, filter }) => content.listForms({ page, pageSize, active: filter }),
  })
