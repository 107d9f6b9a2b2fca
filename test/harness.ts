import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp, type SERVER_TIMEOUTS } from '../src/app.js'
import type { Config } from '../src/config.js'
import { type DatabaseHandle, migrateToLatest, openDatabase } from '../src/db/client.js'
import { MemoryRateLimiter } from '../src/ratelimit/memory.js'
import { createServices, type Services } from '../src/services/index.js'

export interface TestContext {
  app: FastifyInstance
  database: DatabaseHandle
  services: Services
  limiter: MemoryRateLimiter
  /** The `DATABASE_URL` of this context, for CLI processes that should share its database. */
  databaseUrl: string
  dir: string
  close(): Promise<void>
}

export interface TestContextOptions {
  errorStyle?: Config['ERROR_STYLE']
  perHour?: number
  perSecond?: number
  /** A clock for the rate limiter, for tests that move time. */
  clock?: () => number
  logLevel?: Config['LOG_LEVEL']
  logStream?: NodeJS.WritableStream
  timeouts?: Partial<typeof SERVER_TIMEOUTS>
}

/**
 * A fresh, migrated SQLite database in a temporary directory, the real services and the real app.
 * Each call is isolated; `close()` removes everything it made.
 */
export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const dir = mkdtempSync(join(tmpdir(), 'lectern-test-'))
  const databaseUrl = `sqlite:${join(dir, 'lectern.db')}`
  const database = openDatabase(databaseUrl)
  await migrateToLatest(database)
  const services = createServices(database)
  const limiter = new MemoryRateLimiter(
    { perHour: options.perHour ?? 1000, perSecond: options.perSecond ?? 10 },
    options.clock,
  )
  const app = await buildApp({
    config: { ERROR_STYLE: options.errorStyle ?? 'code', LOG_LEVEL: options.logLevel ?? 'silent' },
    services,
    limiter,
    logStream: options.logStream,
    timeouts: options.timeouts,
  })
  return {
    app,
    database,
    services,
    limiter,
    databaseUrl,
    dir,
    async close() {
      await app.close()
      await limiter.close()
      await database.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
