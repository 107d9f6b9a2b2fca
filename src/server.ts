import type { Server } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { Config } from './config.js'
import { type DatabaseHandle, openDatabase } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'
import { serveMetrics } from './http/metrics.js'
import { createIntakeLimiter, createRateLimiter } from './ratelimit/index.js'
import { createServices } from './services/index.js'
import { keySource } from './services/notifications/secrets.js'
import { createNotifier } from './services/notifications/worker.js'

export interface RunningServer {
  app: FastifyInstance
  database: DatabaseHandle
  /** The address actually bound, e.g. `http://127.0.0.1:3000`. */
  url: string
  /** Where `/metrics` is served when `METRICS_PORT` is set. */
  metricsUrl?: string
  /** How long a shutdown may take before the process gives up waiting and exits non-zero. */
  shutdownTimeoutMs: number
  /**
   * Shuts down gracefully: `/readyz` fails at once while requests are still served for
   * `SHUTDOWN_GRACE_MS` (so a load balancer stops routing here), then the listener closes,
   * in-flight requests finish, and the database and Redis are released.
   */
  close(): Promise<void>
}

/**
 * Opens the database, migrates it, builds the app and listens. This is the only place that
 * listens; tests build the app with `buildApp` instead.
 */
export async function startServer(
  config: Config,
  database: DatabaseHandle = openDatabase(config.DATABASE_URL, { backgroundCheckpoints: true }),
) {
  await migrateToLatest(database)
  // The limiter logs through the app's logger, which exists only once the app is built.
  let app: FastifyInstance | undefined
  const limiter = createRateLimiter(config, {
    warn: (object: unknown, message?: string) => app?.log.warn(object, message),
    info: (message: string) => app?.log.info(message),
  })
  const intakeLimiter = createIntakeLimiter(config, {
    warn: (object: unknown, message?: string) => app?.log.warn(object, message),
  })
  const lifecycle = { draining: false }
  const notificationOptions = {
    secretKey: config.SECRET_KEY,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE === 'true',
  }
  app = await buildApp({
    config,
    services: createServices(database, { notifications: notificationOptions }),
    limiter,
    intakeLimiter,
    database,
    lifecycle,
  })
  const url = await app.listen({ port: config.PORT, host: config.HOST })
  // Webhooks and emails are sent from every serving process; leases keep them from sending one twice.
  const log = app.log
  const notifier = createNotifier(database, {
    allowPrivate: notificationOptions.allowPrivate,
    secretKey: keySource(database, config.SECRET_KEY),
    smtpUrl: config.SMTP_URL,
    mailFrom: config.MAIL_FROM,
    publicUrl: config.PUBLIC_URL,
    log: { warn: (object, message) => log.warn(object, message) },
  })
  notifier.start()
  let metricsServer: Server | undefined
  let metricsUrl: string | undefined
  if (config.METRICS_PORT !== undefined) {
    const served = await serveMetrics(app.metrics, {
      host: config.METRICS_HOST,
      port: config.METRICS_PORT,
      token: config.METRICS_TOKEN,
      style: config.ERROR_STYLE,
    })
    metricsServer = served.server
    metricsUrl = served.url
    app.log.info(`Metrics listening at ${metricsUrl}`)
  }
  let closing: Promise<void> | undefined
  const server: RunningServer = {
    app,
    database,
    url,
    metricsUrl,
    shutdownTimeoutMs: config.SHUTDOWN_GRACE_MS + 10_000,
    close() {
      closing ??= (async () => {
        lifecycle.draining = true
        if (config.SHUTDOWN_GRACE_MS > 0)
          await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_GRACE_MS))
        await app.close()
        await notifier.stop()
        if (metricsServer) {
          const server = metricsServer
          await new Promise<void>((resolve) => {
            server.close(() => resolve())
            server.closeAllConnections()
          })
        }
        await limiter.close()
        await intakeLimiter.close()
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
    setTimeout(() => process.exit(1), server.shutdownTimeoutMs).unref()
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
