import { RedirectSchema } from '../../../schemas.js'
import type { ContentService } from '../../../services/content.js'
import { listRoute } from './list-route.js'

/** `GET /api/v1/page-builder/redirects`: redirects oldest first, filterable by `active`. */
export const redirectsRoute = (content: ContentService) =>
  listRoute({
    url: '/page-builder/redirects',
    summary: 'List URL redirects',
    permission: 'redirects:read',
    item: RedirectSchema,
    filter: 'active',
    list: ({ page, pageSize, filter }) => content.listRedirects({ page, pageSize, active: filter }),
  })
