import { Type } from '@sinclair/typebox'
import type { RouteOptions } from 'fastify'
import { NotFoundError } from '../../../errors.js'
import { isSafeId } from '../../../ids.js'
import { FormDetailSchema } from '../../../schemas.js'
import type { IntakeService } from '../../../services/intake.js'
import {
  COMMON_ERROR_STATUSES,
  routeErrorResponses,
  routeResponse,
  SUCCESS_HEADERS,
} from '../../docs/responses.js'
import { entityTag, matchesEntityTag } from './response-cache.js'

/**
 * `GET /api/v1/forms/{id}`: one form with its field definitions and the address its posts go to
 * (`PUBLIC_URL`, else the request's own origin, then `/f/{id}`), so a site can render the form.
 */
export const formRoute = (intake: IntakeService, publicUrl: string | undefined): RouteOptions => ({
  method: 'GET',
  url: '/forms/:id',
  config: { permission: 'forms:read' },
  schema: {
    operationId: 'getForm',
    tags: ['Forms'],
    summary: 'Get a form',
    description:
      'One form with its field definitions and the address a site posts it to (`intake.url`), so a site can render the form from its definition. A form that does not exist is a 404 naming it.\n\nNeeds the `forms:read` permission (roles: `global_admin`, `editor`).',
    security: [{ bearerAuth: [] }],
    params: Type.Object({ id: Type.String({ description: 'form id', examples: ['form_contact'] }) }),
    response: {
      200: routeResponse(
        'The form',
        SUCCESS_HEADERS,
        Type.Object({ data: FormDetailSchema }, { additionalProperties: false }),
      ),
      304: routeResponse(
        'The form has not changed since the `ETag` sent in `If-None-Match`',
        SUCCESS_HEADERS,
      ),
      ...routeErrorResponses([...COMMON_ERROR_STATUSES, 404]),
    },
  },
  validatorCompiler: () => () => true,
  handler: async (request, reply) => {
    const { id } = request.params as { id: string }
    // `/forms/` is a near miss of the list, answered by the API's 404 that names it.
    if (id === '') return reply.callNotFound()
    // No form has an id outside the id alphabet: answered without a query.
    if (!isSafeId(id)) throw new NotFoundError(`Form '${id}' not found`)
    const base = (publicUrl ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '')
    const form = await intake.describe(id)
    // The form's title, description and intake settings live on its row: the forms version covers them.
    const version = request.apiKey?.versions.forms as number
    const tag = entityTag(`/forms/${id}|${base}`, version)
    reply
      .type('application/json; charset=utf-8')
      .header('ETag', tag)
      .header('Cache-Control', 'private, no-cache')
    if (matchesEntityTag(request.headers['if-none-match'], tag))
      return reply.code(304).removeHeader('content-type').send()
    return reply.send({
      data: {
        id: form.id,
        title: form.title,
        description: form.description,
        fields: form.fields,
        intake: {
          enabled: form.isActive && form.settings.enabled,
          url: `${base}/f/${encodeURIComponent(form.id)}`,
        },
      },
    })
  },
})
