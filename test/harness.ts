import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { sql } from 'kysely'
import { buildApp, type SERVER_TIMEOUTS } from '../src/app.js'
import type { Config } from '../src/config.js'
import { type DatabaseHandle, type DialectName, openDatabase } from '../src/db/database.js'
import { randomBase62 } from '../src/ids.js'
import { type IntakeLimiter, MemoryIntakeLimiter, RedisIntakeLimiter } from '../src/ratelimit/intake.js'
import type { RateLimiter } from '../src/ratelimit/limiter.js'
import { MemoryRateLimiter } from '../src/ratelimit/memory.js'
import { RedisRateLimiter } from '../src/ratelimit/redis.js'
import { createServices, type Services } from '../src/services/index.js'
import { checkResponsesAgainstContract } from './contract/recorder.js'
import {
  copyMigratedSqlite,
  createMigratedPostgres,
  dropPostgresDatabase,
  urlOfDatabase,
} from './migrated-template.js'

/**
 * Which database this test run uses: the vitest projects set it, so every database test runs on
 * SQLite and again on PostgreSQL (with Redis counting the rate limits, as several instances would).
 */
export const TEST_DIALECT: DialectName =
  process.env.LECTERN_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite'
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

export interface TestContext {
  app: FastifyInstance
  database: DatabaseHandle
  services: Services
  limiter: RateLimiter
  /** Counts public form posts (Redis on the PostgreSQL project, as several instances would). */
  intakeLimiter: IntakeLimiter
  /** The `DATABASE_URL` of this context, for CLI processes and servers that should share its database. */
  databaseUrl: string
  dialect: DialectName
  dir: string
  close(): Promise<void>
}

export interface TestContextOptions {
  errorStyle?: Config['ERROR_STYLE']
  perHour?: number
  perSecond?: number
  /** A clock for the rate limiter, for tests that move time; it forces the in-memory limiter. */
  clock?: () => number
  logLevel?: Config['LOG_LEVEL']
  logStream?: NodeJS.WritableStream
  timeouts?: Partial<typeof SERVER_TIMEOUTS>
  /** Which optional surfaces to serve (both on by default, as in production). */
  surfaces?: Partial<Pick<Config, 'ADMIN_DASHBOARD' | 'API_REFERENCE'>>
  /** Accepted public form posts per address and form in a rolling minute (5 by default). */
  intakePerMinute?: number
  /** `TRUST_PROXY`, for tests that post from several client addresses. */
  trustProxy?: string
  /** `PUBLIC_URL`. */
  publicUrl?: string
}

export interface TestDatabase {
  url: string
  /** Drops everything the database held. */
  drop(): Promise<void>
}

/**
 * An empty database of the run's dialect: a file in `dir` for SQLite, a schema of its own in the
 * test PostgreSQL database (selected through `search_path` in the URL) for PostgreSQL.
 */
export async function createTestDatabase(
  dir: string,
  dialect: DialectName = TEST_DIALECT,
): Promise<TestDatabase> {
  if (dialect === 'sqlite') return { url: `sqlite:${join(dir, 'lectern.db')}`, drop: async () => {} }
  const schema = `test_${randomBase62(12).toLowerCase()}`
  const admin = openDatabase(TEST_POSTGRES_URL)
  await sql`create schema ${sql.id(schema)}`.execute(admin.db)
  await admin.close()
  const separator = TEST_POSTGRES_URL.includes('?') ? '&' : '?'
  return {
    url: `${TEST_POSTGRES_URL}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    async drop() {
      const cleanup = openDatabase(TEST_POSTGRES_URL)
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(cleanup.db)
      await cleanup.close()
    },
  }
}

/** A database of the run's dialect with every migration applied, copied from a migrated template. */
export async function createMigratedTestDatabase(
  dir: string,
  dialect: DialectName = TEST_DIALECT,
): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const file = join(dir, 'lectern.db')
    await copyMigratedSqlite(file)
    return { url: `sqlite:${file}`, drop: async () => {} }
  }
  const name = await createMigratedPostgres(TEST_POSTGRES_URL)
  return {
    url: urlOfDatabase(TEST_POSTGRES_URL, name),
    drop: () => dropPostgresDatabase(TEST_POSTGRES_URL, name),
  }
}

/**
 * A fresh, migrated database, the real services and the real app. Each call is isolated;
 * `close()` removes everything it made.
 */
export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const dir = mkdtempSync(join(tmpdir(), 'lectern-test-'))
  const testDatabase = await createMigratedTestDatabase(dir)
  const database = openDatabase(testDatabase.url)
  // Connects now, as a server's start does: Kysely ignores `destroy()` on a handle that never ran a
  // query, so a test closing the database to simulate its loss would otherwise see it reopen.
  await database.ping()
  const services = createServices(database)
  const limits = { perHour: options.perHour ?? 1000, perSecond: options.perSecond ?? 10 }
  let redis: Redis | undefined
  let limiter: RateLimiter
  const intakePerMinute = options.intakePerMinute ?? 5
  let intakeLimiter: IntakeLimiter
  if (TEST_DIALECT === 'postgres' && options.clock === undefined) {
    redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
    await redis.connect()
    const prefix = `lectern-test:${randomBase62(10)}:`
    limiter = new RedisRateLimiter(redis, limits, prefix)
    intakeLimiter = new RedisIntakeLimiter(redis, intakePerMinute, `${prefix}intake:`)
  } else {
    limiter = new MemoryRateLimiter(limits, options.clock)
    intakeLimiter = new MemoryIntakeLimiter(intakePerMinute)
  }
  const app = await buildApp({
    config: {
      ERROR_STYLE: options.errorStyle ?? 'code',
      LOG_LEVEL: options.logLevel ?? 'silent',
      RATE_LIMIT_PER_SECOND: limits.perSecond,
      TRUST_PROXY: options.trustProxy,
      PUBLIC_URL: options.publicUrl,
      ...options.surfaces,
    },
    services,
    limiter,
    intakeLimiter,
    database,
    logStream: options.logStream,
    timeouts: options.timeouts,
  })
  checkResponsesAgainstContract(app)
  return {
    app,
    database,
    services,
    limiter,
    intakeLimiter,
    databaseUrl: testDatabase.url,
    dialect: TEST_DIALECT,
    dir,
    async close() {
      await app.close()
      await limiter.close()
      redis?.disconnect()
      await database.close()
      await testDatabase.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
