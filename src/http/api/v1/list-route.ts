import type { Static, TSchema } from '@sinclair/typebox'
import { Type } from '@sinclair/typebox'
import type { RouteOptions } from 'fastify'
import { ErrorSchema, listOf, type PageOf } from '../../../schemas.js'
import type { Permission } from '../../../services/roles.js'
import {
  type BooleanFilter,
  type ListQuery,
  listMeta,
  listQuerySchema,
  parseListQuery,
  type RawQuery,
} from '../../params.js'

declare module 'fastify' {
  interface FastifySchema {
    /** OpenAPI fields carried on the route schema, so the document is generated from the routes. */
    summary?: string
    description?: string
    security?: Record<string, string[]>[]
  }
}

export interface ListRouteDefinition<Item extends TSchema> {
  url: string
  summary: string
  permission: Permission
  item: Item
  filter?: BooleanFilter
  /** Path parameters, for the OpenAPI document. */
  params?: ReturnType<typeof Type.Object>
  list(query: ListQuery, params: Record<string, string>): Promise<PageOf<Static<Item>>>
}

const errorResponses = Object.fromEntries(
  [400, 401, 403, 404, 429, 500, 503].map((status) => [status, Type.Ref(ErrorSchema.$id as string)]),
)

/**
 * Turns a list definition into a Fastify route. The item schema compiles into the serializer, so the
 * response holds exactly the schema's fields, in its order; the same schema feeds the OpenAPI document.
 */
export function listRoute<Item extends TSchema>(definition: ListRouteDefinition<Item>): RouteOptions {
  return {
    method: 'GET',
    url: definition.url,
    config: { permission: definition.permission },
    schema: {
      summary: definition.summary,
      security: [{ bearerAuth: [] }],
      querystring: listQuerySchema(definition.filter),
      ...(definition.params ? { params: definition.params } : {}),
      response: { 200: listOf(definition.item), ...errorResponses },
    },
    // Query validation is `parseListQuery`'s job; the schema above documents it.
    validatorCompiler: () => () => true,
    handler: async (request) => {
      const query = parseListQuery(request.query as RawQuery, definition.filter)
      const page = await definition.list(query, request.params as Record<string, string>)
      return { data: page.items, meta: listMeta(page.total, query) }
    },
  }
}
