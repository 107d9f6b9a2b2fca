import type { FastifyInstance } from 'fastify'
import { withQuery } from '../../html.js'
import type { Services } from '../../services/index.js'
import { answerList } from '../list-view.js'
import { seeOther, signedIn } from '../requests.js'
import { AUDIT_LIST, auditPage } from '../views/audit.js'

/** Organization → Audit log: global admins only. */
export function registerAuditRoutes(app: FastifyInstance, services: Services): void {
  app.get('/audit', { config: { access: 'organization' } }, async (request, reply) => {
    // The log was once filtered by `action` and `actor`: such an address opens the same entries as
    // the action filter and a search.
    const query = request.query as Record<string, unknown>
    const { action, actor } = query
    if (typeof action === 'string' || typeof actor === 'string')
      return seeOther(
        reply,
        withQuery(AUDIT_LIST.base, {
          q: typeof actor === 'string' && actor.trim() !== '' ? actor.trim() : undefined,
          filter: typeof action === 'string' && action !== '' ? action : undefined,
        }),
      )
    const list = { request, reply, sessions: services.sessions, spec: AUDIT_LIST, list: services.lists.audit }
    return answerList(list, ({ view, result, searchProblem }) =>
      auditPage({ session: signedIn(request), view, entries: result, searchProblem }),
    )
  })
}
