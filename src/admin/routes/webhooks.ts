import type { FastifyInstance, FastifyRequest } from 'fastify'
import { NotFoundError, ValidationError } from '../../errors.js'
import { url } from '../../html.js'
import type { Services } from '../../services/index.js'
import { actorOf } from '../actor.js'
import { field, pathParam, redirectWithFlash, signedIn } from '../requests.js'
import { sendPage } from '../views/layout.js'
import {
  newWebhookPage,
  removeWebhookPage,
  webhookPage,
  webhookSecretPage,
  webhooksPage,
} from '../views/webhooks.js'

/** A form field that may be given several times (checkboxes), as a list. */
function fields(request: FastifyRequest, name: string): string[] {
  const value = (request.body as Record<string, unknown> | undefined)?.[name]
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value]
  return list.map((item) => (Buffer.isBuffer(item) ? item.toString('utf8') : String(item)))
}

/**
 * Organization → Webhooks: global admins only. A new or rotated secret is shown in the answer to
 * the POST that made it, once (the page is never cached), and never stored in clear.
 */
export function registerWebhookRoutes(
  app: FastifyInstance,
  services: Services,
  mailConfigured: boolean,
): void {
  const access = { access: 'organization' } as const

  app.get('/webhooks', { config: access }, async (request, reply) =>
    sendPage(
      reply,
      webhooksPage({ session: signedIn(request), endpoints: await services.webhooks.list(), mailConfigured }),
    ),
  )

  app.get('/webhooks/new', { config: access }, async (request, reply) =>
    sendPage(reply, newWebhookPage({ session: signedIn(request) })),
  )

  app.post('/webhooks', { config: access }, async (request, reply) => {
    const session = signedIn(request)
    const input = {
      url: field(request, 'url'),
      formId: field(request, 'formId').trim(),
      events: fields(request, 'events'),
    }
    try {
      const { endpoint, secret } = await services.webhooks.add(input, actorOf(request))
      return sendPage(
        reply,
        webhookSecretPage({ session, endpoint, secret, heading: 'Webhook endpoint added' }),
      )
    } catch (error) {
      if (error instanceof ValidationError || error instanceof NotFoundError)
        return sendPage(reply, newWebhookPage({ session, ...input, problems: [error.message] }), 422)
      throw error
    }
  })

  app.get('/webhooks/:id', { config: access }, async (request, reply) => {
    const endpoint = await services.webhooks.get(pathParam(request, 'id'))
    const deliveries = await services.webhooks.deliveries(endpoint.id, 100)
    return sendPage(reply, webhookPage({ session: signedIn(request), endpoint, deliveries }))
  })

  app.post('/webhooks/:id/rotate', { config: access }, async (request, reply) => {
    const endpoint = await services.webhooks.get(pathParam(request, 'id'))
    const { secret } = await services.webhooks.rotateSecret(endpoint.id, actorOf(request))
    return sendPage(
      reply,
      webhookSecretPage({
        session: signedIn(request),
        endpoint,
        secret,
        heading: 'New signing secret (the previous one also signs for 24 hours)',
      }),
    )
  })

  app.post('/webhooks/:id/enable', { config: access }, async (request, reply) => {
    const endpoint = await services.webhooks.enable(pathParam(request, 'id'), actorOf(request))
    return redirectWithFlash(services.sessions, request, reply, url`/admin/webhooks/${endpoint.id}`, {
      kind: 'success',
      text: 'Endpoint enabled: it receives new events again.',
    })
  })

  app.post('/webhooks/:id/resend', { config: access }, async (request, reply) => {
    const endpoint = await services.webhooks.get(pathParam(request, 'id'))
    const eventId = field(request, 'eventId')
    try {
      await services.webhooks.resend(eventId, endpoint.id, actorOf(request))
    } catch (error) {
      if (!(error instanceof ValidationError || error instanceof NotFoundError)) throw error
      return redirectWithFlash(services.sessions, request, reply, url`/admin/webhooks/${endpoint.id}`, {
        kind: 'error',
        text: error.message,
      })
    }
    return redirectWithFlash(services.sessions, request, reply, url`/admin/webhooks/${endpoint.id}`, {
      kind: 'success',
      text: `Event ${eventId} queued: it is sent again in a moment.`,
    })
  })

  app.get('/webhooks/:id/remove', { config: access }, async (request, reply) =>
    sendPage(
      reply,
      removeWebhookPage({
        session: signedIn(request),
        endpoint: await services.webhooks.get(pathParam(request, 'id')),
      }),
    ),
  )

  app.post('/webhooks/:id/remove', { config: access }, async (request, reply) => {
    const endpoint = await services.webhooks.get(pathParam(request, 'id'))
    await services.webhooks.remove(endpoint.id, actorOf(request))
    return redirectWithFlash(services.sessions, request, reply, url`/admin/webhooks`, {
      kind: 'success',
      text: `Endpoint ${endpoint.url} removed.`,
    })
  })
}
