#!/usr/bin/env node
// Generates the TypeScript client's types (clients/js/src/schema.ts) from openapi.json: one interface per
// component schema, and the query parameters and response of each operation. With --check, exits 1
// when the file differs from what openapi.json gives (so the client never drifts from the document).
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { compile } from 'json-schema-to-typescript'

export const OPENAPI_FILE = fileURLToPath(new URL('../openapi.json', import.meta.url))
export const CLIENT_SCHEMA_FILE = fileURLToPath(new URL('../clients/js/src/schema.ts', import.meta.url))

const BANNER = `// Generated from openapi.json by scripts/client-types.js (\`npm run openapi\`): do not edit.`

// The repository's own formatting, so that the linter accepts the file as generated.
const STYLE = { singleQuote: true, semi: false, printWidth: 110, trailingComma: 'all', tabWidth: 2 }

const pascal = (name) => name.charAt(0).toUpperCase() + name.slice(1)

/** A JSON copy of `value` whose `#/components/schemas/X` references point at `#/definitions/X`. */
function withDefinitionRefs(value) {
  return JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', '"#/definitions/'))
}

/** The query parameters of an operation, as one object schema. */
function querySchema(operation, title) {
  const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query')
  return {
    title,
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(
      query.map(({ name, schema, description }) => [
        name,
        { ...schema, ...(description ? { description } : {}) },
      ]),
    ),
    required: query.filter((parameter) => parameter.required).map((parameter) => parameter.name),
  }
}

/** Every type the client uses, by name: the component schemas, then each operation's query and response. */
function typeSchemas(document) {
  const schemas = { ...document.components.schemas }
  for (const path of Object.values(document.paths)) {
    // A HEAD operation answers the GET's headers without a body: the client's types are the GET's.
    for (const [method, operation] of Object.entries(path)) {
      if (method !== 'get') continue
      const name = pascal(operation.operationId)
      // An operation without query parameters (one form by id) has no Params type: it would be empty.
      const params = querySchema(operation, `${name}Params`)
      if (Object.keys(params.properties).length > 0) schemas[`${name}Params`] = params
      schemas[`${name}Response`] = {
        title: `${name}Response`,
        ...operation.responses['200'].content['application/json'].schema,
      }
    }
  }
  return withDefinitionRefs(schemas)
}

/** The contents of clients/js/src/schema.ts for an OpenAPI document. */
export async function generateClientTypes(document) {
  const definitions = typeSchemas(document)
  const declarations = []
  for (const [name, schema] of Object.entries(definitions)) {
    const declaration = await compile({ ...schema, title: name, definitions }, name, {
      bannerComment: '',
      declareExternallyReferenced: false,
      additionalProperties: false,
      strictIndexSignatures: true,
      unknownAny: true,
      style: STYLE,
    })
    declarations.push(declaration.trim())
  }
  return `${BANNER}\n\n${declarations.join('\n\n')}\n`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const expected = await generateClientTypes(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')))
  if (process.argv.includes('--check')) {
    if (readFileSync(CLIENT_SCHEMA_FILE, 'utf8') !== expected) {
      console.error('clients/js/src/schema.ts is out of date with openapi.json: run `npm run openapi`')
      process.exit(1)
    }
  } else {
    writeFileSync(CLIENT_SCHEMA_FILE, expected)
  }
}
