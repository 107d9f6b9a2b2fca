import type { FastifyInstance } from 'fastify'
import { NotFoundError, ValidationError } from '../../errors.js'
import type { Services } from '../../services/index.js'
import { url } from '../html.js'
import { field, pathParam, redirectWithFlash, signedIn } from '../requests.js'
import { keyCreatedPage, keysPage, newKeyPage, revokeKeyPage } from '../views/keys.js'
import { sendPage } from '../views/layout.js'

/** Organization → API keys: global admins only. */
export function registerKeyRoutes(app: FastifyInstance, services: Services): void {
  const access = { access: 'organization' } as const
  const findKey = async (id: string) => {
    const key = (await services.keys.listApiKeys()).find((candidate) => candidate.id === id)
    if (!key) throw new NotFoundError(`API key '${id}' not found`)
    return key
  }

  app.get('/keys', { config: access }, async (request, reply) =>
    sendPage(reply, keysPage({ session: signedIn(request), keys: await services.keys.listApiKeys() })),
  )

  app.get('/keys/new', { config: access }, async (request, reply) =>
    sendPage(reply, newKeyPage({ session: signedIn(request) })),
  )

  // The key is shown in this response and never again: no redirect, so it never sits in a URL,
  // a session or a cache (dashboard pages are all `no-store`).
  app.post('/keys', { config: access }, async (request, reply) => {
    const session = signedIn(request)
    const name = field(request, 'name')
    try {
      const { key, plainKey } = await services.keys.createApiKey({ name, userEmail: session.user.email })
      const apiBase = `${request.protocol}://${request.host}`
      return sendPage(reply, keyCreatedPage({ session, key, plainKey, apiBase }), 201)
    } catch (error) {
      if (error instanceof ValidationError)
        return sendPage(reply, newKeyPage({ session, name, problems: error.problems }), 422)
      throw error
    }
  })

  for (const [action, change, done] of [
    [
      'deactivate',
      services.keys.deactivateApiKey,
      'deactivated: programs using it are refused until you activate it',
    ],
    ['activate', services.keys.activateApiKey, 'activated: programs can use it again'],
  ] as const) {
    app.post(`/keys/:id/${action}`, { config: access }, async (request, reply) => {
      const key = await findKey(pathParam(request, 'id'))
      try {
        await change(key.id)
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error
        return redirectWithFlash(services.sessions, request, reply, url`/admin/keys`, {
          kind: 'error',
          text: error.message,
        })
      }
      return redirectWithFlash(services.sessions, request, reply, url`/admin/keys`, {
        kind: 'success',
        text: `Key “${key.name}” ${done}.`,
      })
    })
  }

  app.get('/keys/:id/revoke', { config: access }, async (request, reply) =>
    sendPage(
      reply,
      revokeKeyPage({ session: signedIn(request), key: await findKey(pathParam(request, 'id')) }),
    ),
  )

  app.post('/keys/:id/revoke', { config: access }, async (request, reply) => {
    const key = await findKey(pathParam(request, 'id'))
    await services.keys.revokeApiKey(key.id)
    return redirectWithFlash(services.sessions, request, reply, url`/admin/keys`, {
      kind: 'success',
      text: `Key “${key.name}” revoked: it is refused from now on.`,
    })
  })
}
