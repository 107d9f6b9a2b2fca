#!/usr/bin/env node
// Writes openapi.json (generated from the route schemas) and the client's types generated from it.
// Run through `npm run openapi`, which builds first.
import { writeFileSync } from 'node:fs'
import { formatOpenApiDocument, generateOpenApiDocument } from '../dist/openapi-document.js'
import { CLIENT_SCHEMA_FILE, generateClientTypes, OPENAPI_FILE } from './client-types.js'

const document = await generateOpenApiDocument()
writeFileSync(OPENAPI_FILE, formatOpenApiDocument(document))
writeFileSync(CLIENT_SCHEMA_FILE, await generateClientTypes(document))
console.log(`wrote ${OPENAPI_FILE} and ${CLIENT_SCHEMA_FILE}`)
