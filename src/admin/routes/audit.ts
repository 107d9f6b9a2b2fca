import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Services } from '../../services/index.js'
import { url } from '../html.js'
import { PAGE_SIZE, pageRedirect, paging, redirectWithFlash, signedIn } from '../requests.js'
import { auditPage } from '../views/audit.js'
import { sendPage } from '../views/layout.js'

/** A filter from the query string: one value, trimmed; anything else reads as no filter. */
function queryText(request: FastifyRequest, name: string): string {
  const value = (request.query as Record<string, unknown>)[name]
  return typeof value === 'string' ? value.trim().slice(0, 320) : ''
}

/** Organization → Audit log: global admins only. */
export function registerAuditRoutes(app: FastifyInstance, services: Services): void {
  app.get('/audit', { config: { access: 'organization' } }, async (request, reply) => {
    const filter = { action: queryText(request, 'action'), actor: queryText(request, 'actor') }
    const href = (page: number) =>
      url`/admin/audit?action=${filter.action}&actor=${filter.actor}&page=${page}`
    const options = paging(request)
    const list = await services.audit.list(
      { action: filter.action || undefined, actor: filter.actor || undefined },
      options,
    )
    const elsewhere = pageRedirect(request, list.total, href)
    if (elsewhere) return redirectWithFlash(services.sessions, request, reply, elsewhere.url, elsewhere.flash)
    return sendPage(
      reply,
      auditPage({
        session: signedIn(request),
        entries: list.items,
        total: list.total,
        page: options.page,
        pageSize: PAGE_SIZE,
        filter,
        href,
      }),
    )
  })
}
