import { PageSchema } from '../../../schemas.js'
import type { ContentService } from '../../../services/content.js'
import { listRoute } from './list-route.js'

/** `GET /api/v1/page-builder`: pages oldest first, filterable by `published`. */
export const pagesRoute = (content: ContentService) =>
  listRoute({
    url: '/page-builder',
    operationId: 'listPages',
    tag: 'Pages',
    summary: 'List pages',
    description: 'The pages of the site, oldest first (ties broken by id), filterable by `published`.',
    permission: 'pages:read',
    item: PageSchema,
    filter: 'published',
    view: (_params, versions) => ({ version: versions.pages }),
    list: ({ page, pageSize, filter }, _params, { version }) =>
      content.listPages({ page, pageSize, published: filter }, version),
  })
