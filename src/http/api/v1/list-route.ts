import type { Static, TSchema } from '@sinclair/typebox'
import { Type } from '@sinclair/typebox'
import type { RouteOptions } from 'fastify'
import type { FormState } from '../../../db/content-version.js'
import type { JsonPage } from '../../../db/repositories/content.js'
import { listOf, type PageOf } from '../../../schemas.js'
import type { KindVersions } from '../../../services/keys.js'
import { type Permission, ROLE_PERMISSIONS } from '../../../services/roles.js'
import {
  COMMON_ERROR_STATUSES,
  NOT_MODIFIED_HEADERS,
  routeErrorResponses,
  routeResponse,
  SUCCESS_HEADERS,
} from '../../docs/responses.js'
import {
  type BooleanFilter,
  type ListQuery,
  listMeta,
  listQuerySchema,
  parseListQuery,
  type RawQuery,
} from '../../params.js'
import { entityTag, matchesEntityTag, ResponseCache } from './response-cache.js'

declare module 'fastify' {
  interface FastifySchema {
    /** OpenAPI fields carried on the route schema, so the document is generated from the routes. */
    summary?: string
    description?: string
    security?: Record<string, string[]>[]
  }
}

/** What a list's page is read at: the version that covers the list's content, and whatever else was read to learn it. */
export interface ListView {
  version: number
}

/**
 * Query parameters of one list beyond paging: their schema for the document, how they are parsed
 * (problems are reported with those of paging, in one 400), and the text that tells their values
 * apart in the response cache's key.
 */
export interface ListQueryExtension<Extra> {
  properties: Record<string, TSchema>
  parse(query: RawQuery, problems: string[]): Extra
  cacheKey(extra: Extra): string
}

interface ListRouteBase<Item extends TSchema, View extends ListView, Extra> {
  url: string
  /** The operation's name in the OpenAPI document and in generated clients. */
  operationId: string
  /** The document section the operation is listed under. */
  tag: string
  summary: string
  /** What the list holds and in which order; the document adds the permission it needs. */
  description: string
  permission: Permission
  item: Item
  filter?: BooleanFilter
  /** Path parameters, for the OpenAPI document. */
  params?: ReturnType<typeof Type.Object>
  /** The list's own query parameters, if any. */
  extraQuery?: ListQueryExtension<Extra>
  /**
   * The view a request reads, from its path parameters and the kind versions read with its key:
   * its `version` keys the cached response and its entity tag, so it must move on every write to
   * what the list shows, and only then. Read after the request arrived.
   */
  view(
    params: Record<string, string>,
    versions: KindVersions,
    form: FormState | undefined,
  ): View | Promise<View>
  /**
   * The path parameter naming a form whose state `view` reads: the pipeline then reads that state
   * in the key's own statement and hands it to `view` (one statement per request, not two).
   */
  formParam?: string
}

/**
 * A list route: its items either as objects, written by the serializer compiled from `item`, or
 * already as JSON text (`listJson`), for a list whose items are costly to write through objects;
 * that text must be the JSON the item schema describes, with its fields in the schema's order.
 */
export type ListRouteDefinition<
  Item extends TSchema,
  View extends ListView = ListView,
  Extra = undefined,
> = ListRouteBase<Item, View, Extra> &
  (
    | {
        /** One page of items, read at `view`. */
        list(
          query: ListQuery,
          params: Record<string, string>,
          view: View,
          extra: Extra,
        ): Promise<PageOf<Static<Item>>>
        listJson?: never
      }
    | {
        /** One page of items as JSON text, joined by commas. */
        listJson(
          query: ListQuery,
          params: Record<string, string>,
          view: View,
          extra: Extra,
        ): Promise<JsonPage>
        list?: never
      }
  )

/** The list envelope around items that are already JSON text, laid out as the compiled serializer lays it out. */
function listBodyFromJson(page: JsonPage, query: ListQuery): string {
  return `{"data":[${page.json}],"meta":${JSON.stringify(listMeta(page.total, query))}}`
}

const CONDITIONAL_REQUEST_HEADERS = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description: 'an `ETag` of this page seen before: answered `304` with no body while it still holds',
    }),
  ),
})

/** The operation's description: the definition's, plus the permission and the roles that have it. */
function describeOperation<Item extends TSchema, View extends ListView, Extra>(
  definition: ListRouteDefinition<Item, View, Extra>,
): string {
  const roles = Object.entries(ROLE_PERMISSIONS)
    .filter(([, permissions]) => permissions.has(definition.permission))
    .map(([role]) => `\`${role}\``)
  return `${definition.description}\n\nNeeds the \`${definition.permission}\` permission (roles: ${roles.join(', ')}), within the key's scopes if it has any.`
}

/**
 * Turns a list definition into a Fastify route. The item schema compiles into the serializer, so the
 * response holds exactly the schema's fields, in its order; the same schema feeds the OpenAPI document.
 */
export function listRoute<Item extends TSchema, View extends ListView, Extra = undefined>(
  definition: ListRouteDefinition<Item, View, Extra>,
): RouteOptions {
  const cache = new ResponseCache()
  return {
    method: 'GET',
    url: definition.url,
    config: {
      permission: definition.permission,
      ...(definition.formParam ? { formParam: definition.formParam } : {}),
    },
    schema: {
      operationId: definition.operationId,
      tags: [definition.tag],
      summary: definition.summary,
      description: describeOperation(definition),
      security: [{ bearerAuth: [] }],
      querystring: listQuerySchema(definition.filter, definition.extraQuery?.properties),
      ...(definition.params ? { params: definition.params } : {}),
      headers: CONDITIONAL_REQUEST_HEADERS,
      response: {
        200: routeResponse('One page of the list', SUCCESS_HEADERS, listOf(definition.item)),
        304: routeResponse(
          'The page has not changed since the `ETag` sent in `If-None-Match`',
          NOT_MODIFIED_HEADERS,
        ),
        // Only a path that names something (a form) can point at nothing.
        ...routeErrorResponses(definition.params ? [...COMMON_ERROR_STATUSES, 404] : COMMON_ERROR_STATUSES),
      },
    },
    // Query validation is `parseListQuery`'s job; the schema above documents it.
    validatorCompiler: () => () => true,
    handler: async (request, reply) => {
      const problems: string[] = []
      const extra = definition.extraQuery?.parse(request.query as RawQuery, problems) as Extra
      const query = parseListQuery(request.query as RawQuery, definition.filter, problems)
      const params = request.params as Record<string, string>
      // The pipeline authenticated the request and read the kinds' versions with the key; a view
      // that does not exist (an unknown form) is refused here, whatever If-None-Match says.
      const viewed = definition.view(params, request.apiKey?.versions as KindVersions, request.apiKey?.form)
      // Most views are known at once: awaiting one that is not a promise still costs a turn.
      const view = viewed instanceof Promise ? await viewed : viewed
      const version = view.version
      // Only the request's path and query: the pipeline refused any key that may not read them
      // before this handler ran, so an entry serves every key allowed here and no other.
      const extraKey = definition.extraQuery ? `|${definition.extraQuery.cacheKey(extra)}` : ''
      const cacheKey = `${definition.url}|${params.id ?? ''}|${query.page}|${query.pageSize}|${query.filter ?? ''}${extraKey}`
      const kept = cache.get(cacheKey, version)
      const tag = kept?.tag ?? entityTag(cacheKey, version)
      // Lower-case names, as in the pipeline's headers (see `writeRateLimitHeaders`).
      reply
        .type('application/json; charset=utf-8')
        .header('etag', tag)
        .header('cache-control', 'private, no-cache')
      const body =
        kept?.body ??
        (await cache.body(cacheKey, version, tag, async () => {
          if (definition.listJson)
            return listBodyFromJson(await definition.listJson(query, params, view, extra), query)
          const page = await definition.list(query, params, view, extra)
          return reply.serialize({ data: page.items, meta: listMeta(page.total, query) }) as string
        }))
      // A 304 has no body, so nothing for a Content-Type to describe (RFC 9110 §15.4.5).
      if (matchesEntityTag(request.headers['if-none-match'], tag))
        return reply.code(304).removeHeader('content-type').send()
      return reply.send(body)
    },
  }
}
