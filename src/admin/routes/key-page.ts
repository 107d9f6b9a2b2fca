import type { FastifyInstance } from 'fastify'
import { ValidationError } from '../../errors.js'
import { url } from '../../html.js'
import type { Services } from '../../services/index.js'
import { actorOf } from '../actor.js'
import { field, pathParam, redirectWithFlash, signedIn } from '../requests.js'
import { keyPage } from '../views/key-page.js'
import { sendPage } from '../views/layout.js'
import { usageChart } from '../views/usage.js'

/** Organization → API keys → one key: its details and usage, and renaming it. Global admins only. */
export function registerKeyPageRoutes(app: FastifyInstance, services: Services): void {
  const access = { access: 'organization' } as const

  app.get('/keys/:id', { config: access }, async (request, reply) => {
    const key = await services.keys.findApiKey(pathParam(request, 'id'))
    const usage = usageChart(await services.usage.hourly(key.id))
    const access = await services.keys.findKeyAccess(key.id)
    return sendPage(reply, keyPage({ session: signedIn(request), key, usage, access }))
  })

  app.post('/keys/:id/rename', { config: access }, async (request, reply) => {
    const key = await services.keys.findApiKey(pathParam(request, 'id'))
    const name = field(request, 'name')
    try {
      const renamed = await services.keys.renameApiKey(key.id, name, actorOf(request))
      return redirectWithFlash(services.sessions, request, reply, url`/admin/keys/${key.id}`, {
        kind: 'success',
        text: `Key “${key.name}” is now called “${renamed.name}”.`,
      })
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      return sendPage(
        reply,
        keyPage({
          session: signedIn(request),
          key,
          name,
          problems: error.problems,
          access: await services.keys.findKeyAccess(key.id),
        }),
        422,
      )
    }
  })
}
