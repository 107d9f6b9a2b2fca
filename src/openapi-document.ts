import { buildApp } from './app.js'
import { openDatabase } from './db/database.js'
import type { OpenApiDocument } from './http/docs/openapi.js'
import { MemoryRateLimiter } from './ratelimit/memory.js'
import { createServices } from './services/index.js'

/**
 * The OpenAPI document, generated from a freshly built app. Nothing is queried: the app only needs
 * to exist, so it gets an empty in-memory database.
 */
export async function generateOpenApiDocument(): Promise<OpenApiDocument> {
  const database = openDatabase('sqlite::memory:')
  const app = await buildApp({
    config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: 10 },
    services: createServices(database),
    limiter: new MemoryRateLimiter({ perHour: 1000, perSecond: 10 }),
    database,
  })
  try {
    await app.ready()
    return app.swagger() as OpenApiDocument
  } finally {
    await app.close()
    await database.close()
  }
}

/** The document as `openapi.json` holds it: two-space indentation and a final newline. */
export function formatOpenApiDocument(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`
}
