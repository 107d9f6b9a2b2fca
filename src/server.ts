import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { type DatabaseHandle, migrateToLatest, openDatabase } from './db/client.js'
import { MemoryRateLimiter } from './ratelimit/memory.js'
import { createServices } from './services/index.js'

export interface RunningServer {
  app: FastifyInstance
  database: DatabaseHandle
  /** The address actually bound, e.g. `http://127.0.0.1:3000`. */
  url: string
  /** Stops accepting connections, lets in-flight requests finish, then releases the database. */
  close(): Promise<void>
}

/**
 * Opens the database, migrates it, builds the app and listens. This is the only place that
 * listens; tests build the app with `buildApp` instead.
 */
export async function startServer(
  config: Config,
  database: DatabaseHandle = openDatabase(config.DATABASE_URL),
) {
  await migrateToLatest(database)
  const limiter = new MemoryRateLimiter({
    perHour: config.RATE_LIMIT_PER_HOUR,
    perSecond: config.RATE_LIMIT_PER_SECOND,
  })
  const app = await buildApp({ config, services: createServices(database), limiter })
  const url = await app.listen({ port: config.PORT, host: config.HOST })
  let closing: Promise<void> | undefined
  const server: RunningServer = {
    app,
    database,
    url,
    close() {
      closing ??= (async () => {
        await app.close()
        await limiter.close()
        await database.close()
      })()
      return closing
    },
  }
  return server
}

/** Closes the server on SIGTERM/SIGINT and exits 0 once in-flight requests are done. */
export function closeOnSignals(server: RunningServer): void {
  const stop = (signal: NodeJS.Signals) => {
    server.app.log.info({ signal }, 'shutting down')
    // A stuck connection must not keep the process alive forever.
    setTimeout(() => process.exit(1), 10_000).unref()
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'error while shutting down')
        process.exit(1)
      },
    )
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}
