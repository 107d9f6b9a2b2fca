import { PageSchema } from '../../../schemas.js'
import type { ContentService } from '../../../services/content.js'
import { listRoute } from './list-route.js'

/** `GET /api/v1/page-builder`: pages oldest first, filterable by `published`. */
export const pagesRoute = (content: ContentService) =>
  listRoute({
    url: '/page-builder',
    summary: 'List pages',
    permission: 'pages:read',
    item: PageSchema,
    filter: 'published',
    list: ({ page, pageSize, filter }) => content.listPages({ page, pageSize, published: filter }),
  })
