import { RedirectSchema } from '../../../schemas.js'
import type { ContentService } from '../../../services/content.js'
import { listRoute } from './list-route.js'

/** `GET /api/v1/page-builder/redirects`: redirects oldest first, filterable by `active`. */
export const redirectsRoute = (content: ContentService) =>
  listRoute({
    url: '/page-builder/redirects',
    operationId: 'listRedirects',
    tag: 'Redirects',
    summary: 'List URL redirects',
    description:
      'The URL redirects of the site, oldest first (ties broken by id), filterable by `active`. A redirect matches its `fromPath` exactly and carries the query string over.',
    permission: 'redirects:read',
    item: RedirectSchema,
    filter: 'active',
    view: (_params, versions) => ({ version: versions.redirects }),
    list: ({ page, pageSize, filter }, _params, { version }) =>
      content.listRedirects({ page, pageSize, active: filter }, version),
  })
