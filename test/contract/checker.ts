import { readFileSync } from 'node:fs'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { OpenAPIV3_1 } from 'openapi-types'
import { ERROR_RESPONSES } from '../../src/http/docs/responses.js'

/** A response as a test received it (or as the server is about to send it). */
export interface ObservedResponse {
  method: string
  /** The request URL: a path with its query string. */
  url: string
  statusCode: number
  headers: Record<string, string | string[] | number | undefined>
  /** The body as sent; empty for `HEAD` and bodiless statuses. */
  body: string
}

type Operation = OpenAPIV3_1.OperationObject
type Response = OpenAPIV3_1.ResponseObject
type Header = OpenAPIV3_1.HeaderObject

/** The committed document: what clients are told, and what every response must match. */
export const OPENAPI_FILE = new URL('../../openapi.json', import.meta.url)

const API_PATH = /^\/api\/v1(\/|$)/

/** A JSON pointer token (RFC 6901). */
const token = (value: string) => value.replaceAll('~', '~0').replaceAll('/', '~1')

/**
 * Checks responses against an OpenAPI document: the status is documented for the operation, the
 * documented required headers are present and well-formed, and the body has the documented media
 * type and matches its schema. Requests that match no operation (an unknown path, a method the API
 * does not serve) must answer one of the document's shared error responses.
 */
export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  private readonly validators = new Map<string, ValidateFunction>()
  private readonly operations: { pattern: RegExp; pointer: string; path: OpenAPIV3_1.PathItemObject }[]
  private readonly sharedByStatus: Map<number, string>

  constructor(private readonly document: OpenAPIV3_1.Document) {
    addFormats.default(this.ajv)
    this.ajv.addSchema(document as object, 'openapi')
    this.operations = Object.entries(document.paths ?? {}).map(([path, item]) => ({
      pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
      pointer: `/paths/${token(path)}`,
      path: item as OpenAPIV3_1.PathItemObject,
    }))
    this.sharedByStatus = new Map(
      ERROR_RESPONSES.map(({ status, name }) => [status, `/components/responses/${token(name)}`]),
    )
  }

  /** Every way `response` departs from the document; empty when it matches. */
  check(response: ObservedResponse): string[] {
    const path = response.url.split('?', 1)[0] ?? ''
    if (!API_PATH.test(path)) return []
    const documented = this.documentedResponse(response.method, path, response.statusCode)
    if (typeof documented === 'string') return [documented]
    const { pointer, definition } = documented
    return [
      ...this.checkHeaders(definition, pointer, response),
      ...this.checkBody(definition, pointer, response),
    ]
  }

  /** The response the document gives for this request and status, with its JSON pointer. */
  private documentedResponse(method: string, path: string, status: number) {
    const verb = method === 'HEAD' ? 'get' : method.toLowerCase()
    const match = this.operations.find((operation) => operation.pattern.test(path))
    const operation = match?.path[verb as 'get'] as Operation | undefined
    let pointer: string | undefined
    if (match && operation) {
      const key = String(status) in (operation.responses ?? {}) ? String(status) : 'default'
      if (operation.responses?.[key]) pointer = `${match.pointer}/${verb}/responses/${key}`
      else return `${method} ${path}: status ${status} is not documented for ${operation.operationId}`
    } else {
      pointer = this.sharedByStatus.get(status)
      if (!pointer) return `${method} ${path}: matches no operation and ${status} is no shared error response`
    }
    let definition = this.resolve(pointer) as Response | OpenAPIV3_1.ReferenceObject
    if ('$ref' in definition) {
      pointer = definition.$ref.slice(1)
      definition = this.resolve(pointer) as Response
    }
    return { pointer, definition: definition as Response }
  }

  private checkHeaders(definition: Response, pointer: string, response: ObservedResponse): string[] {
    const problems: string[] = []
    for (const [name, header] of Object.entries((definition.headers ?? {}) as Record<string, Header>)) {
      const raw = response.headers[name.toLowerCase()]
      if (raw === undefined) {
        if (header.required) problems.push(`header ${name} is missing`)
        continue
      }
      const value = Array.isArray(raw) ? raw.join(', ') : String(raw)
      const schema = header.schema as { type?: string } | undefined
      const parsed = schema?.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value
      const validate = this.validator(`${pointer}/headers/${token(name)}/schema`)
      if (!validate(parsed))
        problems.push(`header ${name}: ${JSON.stringify(value)} ${this.describe(validate)}`)
    }
    return problems
  }

  private checkBody(definition: Response, pointer: string, response: ObservedResponse): string[] {
    const media = Object.keys(definition.content ?? {})
    if (media.length === 0) return response.body === '' ? [] : ['a body where the document has none']
    const type =
      String(response.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim() ?? ''
    if (!media.includes(type))
      return [`content type ${JSON.stringify(type)} is not one of ${media.join(', ')}`]
    if (response.method === 'HEAD' && response.body === '') return []
    let body: unknown
    try {
      body = JSON.parse(response.body)
    } catch {
      return [`the body is not JSON: ${response.body.slice(0, 200)}`]
    }
    const validate = this.validator(`${pointer}/content/${token(type)}/schema`)
    return validate(body) ? [] : [`the body ${this.describe(validate)}: ${response.body.slice(0, 500)}`]
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer)
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi#${pointer}` })
      this.validators.set(pointer, validate)
    }
    return validate
  }

  private resolve(pointer: string): unknown {
    return pointer
      .split('/')
      .slice(1)
      .reduce<unknown>(
        (node, part) => (node as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')],
        this.document,
      )
  }

  private describe(validate: ValidateFunction): string {
    return (validate.errors ?? [])
      .map((error) => (error.instancePath ? `${error.instancePath} ${error.message}` : String(error.message)))
      .join('; ')
  }
}

let shared: ContractChecker | undefined

/** The checker for the committed `openapi.json`, built once per test file. */
export function contractChecker(): ContractChecker {
  shared ??= new ContractChecker(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenAPIV3_1.Document)
  return shared
}
