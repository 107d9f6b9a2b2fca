import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import type { TObject } from '@sinclair/typebox'
import type { OpenAPIV3_1 } from 'openapi-types'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatOpenApiDocument } from '../../src/openapi-document.js'
import * as schemas from '../../src/schemas.js'
import { createTestContext, type TestContext } from '../harness.js'
import { OPENAPI_FILE } from './checker.js'

type Operation = OpenAPIV3_1.OperationObject
type Response = OpenAPIV3_1.ResponseObject

const OPERATIONS = {
  '/api/v1/forms': { operationId: 'listForms', filter: 'active', pathParameters: [] },
  '/api/v1/forms/{id}/submissions': {
    operationId: 'listFormSubmissions',
    filter: null,
    pathParameters: ['id'],
    windowFilters: true,
  },
  '/api/v1/page-builder': { operationId: 'listPages', filter: 'published', pathParameters: [] },
  '/api/v1/page-builder/redirects': { operationId: 'listRedirects', filter: 'active', pathParameters: [] },
} as const

/** The operations that answer one resource rather than a list. */
const SINGLE_OPERATIONS = {
  '/api/v1/forms/{id}': { operationId: 'getForm', pathParameters: ['id'] },
} as const

const ALL_OPERATIONS = { ...OPERATIONS, ...SINGLE_OPERATIONS }

const ERROR_TYPES_BY_STATUS: Record<string, string[]> = {
  '400': ['invalid_parameters', 'bad_request'],
  '401': [
    'missing_authorization_header',
    'invalid_authorization_format',
    'invalid_api_key',
    'api_key_inactive',
  ],
  '403': ['insufficient_permissions'],
  '404': ['resource_not_found'],
  '405': ['method_not_allowed'],
  '429': ['rate_limit_exceeded'],
  '500': ['internal_error'],
  '503': ['service_unavailable'],
}

describe('the OpenAPI document', () => {
  let ctx: TestContext
  let document: OpenAPIV3_1.Document

  beforeAll(async () => {
    ctx = await createTestContext()
    await ctx.app.ready()
    document = ctx.app.swagger() as OpenAPIV3_1.Document
  })
  afterAll(() => ctx.close())

  const operation = (path: string) => document.paths?.[path]?.get as Operation
  const responsesOf = (path: string) => operation(path).responses ?? {}
  const sharedResponse = (reference: unknown) => {
    const name = (reference as { $ref: string }).$ref.replace('#/components/responses/', '')
    return document.components?.responses?.[name] as Response
  }
  const errorEnum = (response: Response) => {
    const schema = response.content?.['application/json']?.schema as {
      allOf: [unknown, { properties: { error: { enum: string[] } } }]
    }
    return schema.allOf[1].properties.error.enum
  }

  it('is committed as openapi.json exactly as the routes generate it (run `npm run openapi` after a change)', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(formatOpenApiDocument(document))
  })

  it('is served at /openapi.json without an API key', async () => {
    const res = await ctx.app.inject({ url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.json()).toEqual(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')))
  })

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0')
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined()
  })

  it('describes exactly the five endpoints, each with GET and HEAD, and hides every route outside /api/v1', () => {
    expect(Object.keys(document.paths ?? {}).sort()).toEqual(Object.keys(ALL_OPERATIONS).sort())
    for (const [path, expected] of Object.entries(ALL_OPERATIONS)) {
      expect(Object.keys(document.paths?.[path] ?? {})).toEqual(['get', 'head'])
      expect(operation(path).operationId).toBe(expected.operationId)
      const head = document.paths?.[path]?.head as Operation
      expect(head.operationId).toBe(`${expected.operationId}Head`)
      expect(head.parameters).toEqual(operation(path).parameters)
      // Same headers as the GET, and no body.
      const ok = head.responses?.['200'] as Response
      expect(ok.content).toBeUndefined()
      expect(Object.keys(ok.headers ?? {})).toEqual(
        Object.keys((responsesOf(path)['200'] as Response).headers ?? {}),
      )
    }
  })

  it('names the servers, a contact and the licence', () => {
    expect(document.servers).toEqual([{ url: '/', description: expect.any(String) }])
    expect(document.info.contact?.name).toEqual(expect.any(String))
    expect(document.info.license).toMatchObject({ name: 'MIT', url: expect.stringMatching(/^https:/) })
  })

  it('documents the 405 with its Allow header on every operation, for the methods a path does not serve', () => {
    for (const path of Object.keys(ALL_OPERATIONS)) {
      for (const method of ['get', 'head'] as const) {
        const responses = (document.paths?.[path]?.[method] as Operation | undefined)?.responses ?? {}
        expect(responses['405']).toEqual({ $ref: '#/components/responses/MethodNotAllowed' })
      }
    }
  })

  it('names the resources, the list meta and the error envelope as components, with their fields in order', () => {
    const components = document.components?.schemas ?? {}
    expect(Object.keys(components).sort()).toEqual([
      'Error',
      'Form',
      'FormDetail',
      'FormField',
      'ListMeta',
      'Page',
      'Redirect',
      'Submission',
    ])
    const named = (Object.values(schemas) as unknown[]).filter(
      (value): value is TObject => typeof value === 'object' && typeof (value as TObject).$id === 'string',
    )
    expect(named.map((schema) => schema.$id).sort()).toEqual(Object.keys(components).sort())
    for (const resource of named) {
      const component = components[resource.$id as string] as {
        properties: object
        additionalProperties: unknown
      }
      // The API tests hold each schema to the SPEC's fields and order; the document must keep both.
      expect(Object.keys(component.properties)).toEqual(Object.keys(resource.properties))
      expect(component.additionalProperties).toBe(false)
    }
  })

  it('documents page, pageSize, the filter and the path id of each endpoint', () => {
    for (const [path, expected] of Object.entries(OPERATIONS)) {
      const parameters = (operation(path).parameters ?? []) as OpenAPIV3_1.ParameterObject[]
      const query = Object.fromEntries(
        parameters.filter((p) => p.in === 'query').map((p) => [p.name, p.schema]),
      )
      expect(query.page).toMatchObject({ type: 'integer', minimum: 1, default: 1 })
      expect(query.pageSize).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 })
      const filters = Object.keys(query).filter((name) => name !== 'page' && name !== 'pageSize')
      const windowed = 'windowFilters' in expected
      expect(filters).toEqual(
        expected.filter ? [expected.filter] : windowed ? ['since', 'until', 'isRead', 'isStarred'] : [],
      )
      if (expected.filter) expect(query[expected.filter]).toEqual({ type: 'boolean' })
      if (windowed) {
        for (const name of ['since', 'until'])
          expect(query[name]).toEqual({ type: 'string', format: 'date-time' })
        for (const name of ['isRead', 'isStarred']) expect(query[name]).toEqual({ type: 'boolean' })
      }
      const inPath = parameters.filter((p) => p.in === 'path')
      expect(inPath.map((p) => [p.name, p.required])).toEqual(
        expected.pathParameters.map((name) => [name, true]),
      )
    }
  })

  it('secures every operation with the bearer scheme', () => {
    expect(document.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    for (const path of Object.keys(ALL_OPERATIONS))
      expect(operation(path).security).toEqual([{ bearerAuth: [] }])
  })

  it('documents the request id, rate-limit and entity-tag headers of a successful response', () => {
    for (const path of Object.keys(ALL_OPERATIONS)) {
      const ok = responsesOf(path)['200'] as Response
      const envelope = path in OPERATIONS ? ['data', 'meta'] : ['data']
      expect(ok.content?.['application/json']?.schema).toMatchObject({ required: envelope })
      for (const name of [
        'X-Request-Id',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'ETag',
        'Cache-Control',
      ]) {
        expect(ok.headers?.[name]).toMatchObject({ required: true })
      }
    }
  })

  it('documents every error status of every operation, with the error types it can carry', () => {
    for (const [path, expected] of Object.entries(ALL_OPERATIONS)) {
      const statuses = Object.keys(responsesOf(path))
      expect(statuses).toEqual(
        expect.arrayContaining(['400', '401', '403', '405', '408', '414', '429', '431', '500', '503']),
      )
      expect(statuses.includes('404')).toBe(expected.pathParameters.length > 0)
      for (const [status, types] of Object.entries(ERROR_TYPES_BY_STATUS)) {
        if (status === '405' || !statuses.includes(status)) continue
        expect(errorEnum(sharedResponse(responsesOf(path)[status])), status).toEqual(
          expect.arrayContaining(types),
        )
      }
    }
    const responses = document.components?.responses ?? {}
    expect(errorEnum(responses.MethodNotAllowed as Response)).toEqual([
      'method_not_allowed',
      'Method not allowed',
    ])
    expect(errorEnum(responses.Unauthorized as Response)).toContain('Invalid API key')
  })

  it('documents the headers each error response carries', () => {
    const responses = (document.components?.responses ?? {}) as Record<string, Response>
    const required = (name: string) =>
      Object.entries(responses[name]?.headers ?? {})
        .filter(([, header]) => (header as OpenAPIV3_1.HeaderObject).required)
        .map(([header]) => header)
    expect(required('Unauthorized')).toEqual(['X-Request-Id', 'WWW-Authenticate'])
    expect(required('MethodNotAllowed')).toEqual(['X-Request-Id', 'Allow'])
    expect(required('RateLimited')).toEqual([
      'X-Request-Id',
      'Retry-After',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'RateLimit-Policy',
      'RateLimit',
    ])
    expect(required('ServiceUnavailable')).toEqual(['X-Request-Id', 'Retry-After'])
    expect(responses.MethodNotAllowed?.headers?.Allow).toMatchObject({ schema: { enum: ['GET, HEAD'] } })
  })

  it('gives every operation a curl example', () => {
    for (const path of Object.keys(ALL_OPERATIONS)) {
      for (const [method, flag] of [
        ['get', ''],
        ['head', ' --head'],
      ] as const) {
        const withSamples = document.paths?.[path]?.[method] as
          | { 'x-codeSamples'?: { lang: string; source: string }[] }
          | undefined
        const [sample] = withSamples?.['x-codeSamples'] ?? []
        expect(sample?.lang).toBe('Shell')
        expect(sample?.source).toMatch(
          new RegExp(
            `^curl${flag} "http://127\\.0\\.0\\.1:3000/api/v1/[^"]+" \\\\\n {2}-H "Authorization: Bearer \\$LECTERN_API_KEY"$`,
          ),
        )
      }
    }
  })

  it('keeps the client types in clients/js/src/schema.ts generated from openapi.json (run `npm run openapi`)', async () => {
    const script = new URL('../../scripts/client-types.js', import.meta.url).pathname
    await expect(promisify(execFile)(process.execPath, [script, '--check'])).resolves.toBeDefined()
  })
})
