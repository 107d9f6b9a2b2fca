import { readFileSync } from 'node:fs'
import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import type { OpenAPIV3_1 } from 'openapi-types'
import { ERROR_TYPES } from '../../errors.js'
import { MAX_PAGE_SIZE } from '../params.js'
import { ERROR_RESPONSES, type ErrorResponse, errorBodySchema } from './responses.js'

/** The path prefix of the public API: only its routes are documented. */
export const API_PREFIX = '/api/v1/'

export type OpenApiDocument = OpenAPIV3_1.Document

type JsonObject = Record<string, unknown>

const VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version

const SAMPLE_BASE_URL = 'http://127.0.0.1:3000'

const errorTable = [
  '| Status | `error` (code form) | `error` (phrase form) |',
  '| --- | --- | --- |',
  ...Object.entries(ERROR_TYPES)
    .sort(([, a], [, b]) => a.status - b.status)
    .map(([type, { status, phrase }]) => `| ${status} | \`${type}\` | ${phrase} |`),
].join('\n')

const DESCRIPTION = `Lectern serves a site's forms, form submissions, pages and URL redirects as JSON. The API is read-only.

## Authentication

Every request needs an API key: \`Authorization: Bearer <API_KEY>\` (the word \`Bearer\` in any case). Keys look like \`lk_live_…\`; an administrator creates them with \`lectern keys create\`. A key has the permissions of the role of the user who created it, looked up on every request.

Keep keys on servers: never ship a key to a browser or a mobile app.

## Lists

Every endpoint returns one page of a list: \`{ "data": [...], "meta": { "total", "page", "pageSize", "totalPages" } }\`. \`page\` starts at 1; \`pageSize\` is 1 to ${MAX_PAGE_SIZE} (default 20). A page past the end is an empty \`data\`. A parameter given twice is an error; parameters an endpoint does not know are ignored, and the response names them in a \`Lectern-Warning\` header (\`unknown query parameter 'pagesize' ignored\`), so a misspelt \`pageSize\` does not go unnoticed. Timestamps are UTC to the second: \`2024-01-05T10:00:00Z\`.

## Errors

Every error is \`{ "error": "<type>", "message": "<text>" }\`. \`error\` is a code by default; a server started with \`ERROR_STYLE=phrase\` sends the phrase instead.

${errorTable}

## Rate limits

Each key may make 1000 requests per hour and 10 in any rolling second (the server's \`RATE_LIMIT_PER_HOUR\` and \`RATE_LIMIT_PER_SECOND\`). Every response to a valid key carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (the hourly limit), and both limits in the IETF draft's fields: \`RateLimit-Policy: "hour";q=1000;w=3600, "burst";q=10;w=1\` and \`RateLimit: "hour";r=962;t=1200\` (remaining and seconds to reset; a \`"burst";r=0\` item is added when the per-second limit refused the request). Over a limit the answer is \`429\` with \`Retry-After\` in seconds, and the message says which limit was hit; a refused request uses no quota.

## Methods and request ids

Every \`GET\` also answers \`HEAD\` (same status and headers, no body). Any other method on any \`/api/v1\` path answers \`405\` with \`Allow: GET, HEAD\`: each operation lists that response, which the path gives to every other method. Every response carries \`X-Request-Id\`.`

/** An error response as the document's `components.responses` holds it. */
function documentErrorResponse(response: ErrorResponse): JsonObject {
  return {
    description: response.description,
    headers: Object.fromEntries(
      Object.entries(response.headers).map(([name, { description, required, schema }]) => [
        name,
        { description, required, schema },
      ]),
    ),
    content: {
      'application/json': { schema: errorBodySchema(response, '#/components/schemas/Error') },
    },
  }
}

/** What a HEAD operation says beside its GET: its own id, and that only headers come back. */
function headOperation(schema: JsonObject): JsonObject {
  const operationId = String(schema.operationId).replace(/-head$/, 'Head')
  return {
    operationId,
    summary: `${schema.summary} (headers only)`,
    description: `The same as the \`GET\` of this path (status, headers, permission, rate limit) without a body: a cheap way to check the \`ETag\` or the key's rate-limit state.\n\n${schema.description}`,
  }
}

/** A curl command for an operation, with its filter set so that the example shows one. */
function curlSample(url: string, schema: JsonObject, head = false): string {
  const params = (schema.params as { properties?: Record<string, { examples?: string[] }> } | undefined)
    ?.properties
  const path = url.replace(/:(\w+)/g, (_, name: string) => params?.[name]?.examples?.[0] ?? `{${name}}`)
  const properties =
    (schema.querystring as { properties?: Record<string, { examples?: unknown[] }> } | undefined)
      ?.properties ?? {}
  const filter = Object.keys(properties).find((name) => name !== 'page' && name !== 'pageSize')
  // A flag shows `true`; a parameter with an example (a time) shows its example.
  const value = filter === undefined ? undefined : String(properties[filter]?.examples?.[0] ?? true)
  const search = `${filter ? `${filter}=${value}&` : ''}page=1&pageSize=20`
  return `curl${head ? ' --head' : ''} "${SAMPLE_BASE_URL}${path}?${search}" \\\n  -H "Authorization: Bearer $LECTERN_API_KEY"`
}

/**
 * What the generator leaves for us: error responses become references to the shared
 * `components.responses`, and a header's `required` flag, which route schemas carry beside the
 * header's schema, moves to the header object where OpenAPI wants it.
 */
function finishDocument(document: JsonObject): JsonObject {
  const shared = new Map(ERROR_RESPONSES.map((response) => [String(response.status), response]))
  const paths = (document.paths ?? {}) as Record<
    string,
    Record<string, { responses: Record<string, JsonObject> }>
  >
  const methodNotAllowed = ERROR_RESPONSES.find((response) => response.status === 405)
  for (const operations of Object.values(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      // Every path answers 405 to the methods it does not serve; the operations it does serve are
      // where OpenAPI can say so.
      if (methodNotAllowed) operation.responses['405'] = { description: methodNotAllowed.description }
      operation.responses = Object.fromEntries(
        Object.entries(operation.responses).sort(([a], [b]) => Number(a) - Number(b)),
      )
      for (const [status, response] of Object.entries(operation.responses)) {
        const error = shared.get(status)
        if (error) {
          operation.responses[status] = { $ref: `#/components/responses/${error.name}` }
          continue
        }
        if (method === 'head') delete response.content
        for (const header of Object.values(
          (response.headers ?? {}) as Record<string, { schema: JsonObject }>,
        )) {
          const { required, ...schema } = header.schema
          Object.assign(header, { required: required === true, schema })
        }
      }
    }
  }
  const components = (document.components ?? {}) as JsonObject
  components.responses = Object.fromEntries(
    ERROR_RESPONSES.map((response) => [response.name, documentErrorResponse(response)]),
  )
  return { ...document, components }
}

/**
 * Generates the OpenAPI 3.1 document from the route schemas (@fastify/swagger) and serves it at
 * `GET /openapi.json`, without an API key. Only `/api/v1` routes are documented. Register it
 * before the routes: the generator sees the routes added after it.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Lectern API',
        version: VERSION,
        description: DESCRIPTION,
        contact: { name: 'The administrators of this Lectern site' },
        license: { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' },
      },
      // Relative: the document is served by the API it describes, wherever that runs.
      servers: [{ url: '/', description: 'The Lectern server that serves this document' }],
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'Forms', description: "The site's forms and their submissions." },
        { name: 'Pages', description: 'The pages built with the page builder.' },
        { name: 'Redirects', description: "The site's URL redirects." },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key (`lk_live_…`), sent as `Authorization: Bearer <API_KEY>`.',
          },
        },
      },
    },
    // Schemas with an `$id` (the resources, `ListMeta`, `Error`) are named components.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    // HEAD is served for every GET and documented as its own operation, as clients call it.
    exposeHeadRoutes: true,
    transform: ({ schema, url, route }) => {
      if (!url.startsWith(API_PREFIX)) return { schema: { ...schema, hide: true }, url }
      const head = route.method === 'HEAD'
      const source = curlSample(url, schema as JsonObject, head)
      const sample = { lang: 'Shell', label: 'curl', source }
      const operation = head ? headOperation(schema as JsonObject) : {}
      return { schema: { ...schema, ...operation, 'x-codeSamples': [sample] } as typeof schema, url }
    },
    transformObject: (generated) =>
      'openapiObject' in generated
        ? (finishDocument(generated.openapiObject as JsonObject) as OpenApiDocument)
        : generated.swaggerObject,
  })

  let body: string | undefined
  app.get('/openapi.json', async (_request, reply) => {
    body ??= JSON.stringify(app.swagger())
    return reply.type('application/json; charset=utf-8').header('Access-Control-Allow-Origin', '*').send(body)
  })
}
