import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createServices, type Services } from '../../src/services/index.js'
import { keySource } from '../../src/services/notifications/secrets.js'
import { createNotifier, type NotifierOptions } from '../../src/services/notifications/worker.js'
import { buildForm } from '../factories.js'
import type { TestContext } from '../harness.js'

/** The `SECRET_KEY` of these tests (PostgreSQL refuses endpoints without one). */
export const SECRET_KEY = 'test-secret-key-0123456789abcdefghijklmnop'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
}

export interface Receiver {
  url: string
  received: Received[]
  close(): Promise<void>
}

/**
 * A real HTTP server that records every request and answers as `answer` says: a status, or a
 * promise of one (a slow receiver), or null to never answer.
 */
export async function startReceiver(
  answer: (request: Received, index: number) => number | Promise<number> | null = () => 200,
): Promise<Receiver> {
  const received: Received[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') }
      received.push(entry)
      const status = await answer(entry, received.length - 1)
      if (status === null) return
      if (!response.destroyed)
        response.writeHead(status, { 'content-type': 'text/plain' }).end(`answer ${status}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The context's services, able to add endpoints (a `SECRET_KEY`; private addresses allowed unless told). */
export function notifyingServices(ctx: TestContext, allowPrivate = true): Services {
  return createServices(ctx.database, { notifications: { secretKey: SECRET_KEY, allowPrivate } })
}

/** A delivery worker on the context's database, not started: tests drive it with `runOnce`/`drain`. */
export function testNotifier(ctx: TestContext, options: Partial<NotifierOptions> = {}) {
  return createNotifier(ctx.database, {
    allowPrivate: true,
    secretKey: keySource(ctx.database, SECRET_KEY),
    ...options,
  })
}

/** A form whose intake is on, with `settings`. */
export async function openForm(ctx: TestContext, settings: Record<string, unknown> = {}, title = 'Contact') {
  const { id } = await buildForm(ctx.database.db, { title })
  await ctx.services.intake.updateSettings(id, { enabled: true, ...settings })
  return id
}

/** Deliveries of the context's database, as rows. */
export function deliveries(ctx: TestContext) {
  return ctx.database.db.selectFrom('notification_deliveries').selectAll().orderBy('created_at').execute()
}

export function events(ctx: TestContext) {
  return ctx.database.db.selectFrom('notification_events').selectAll().orderBy('created_at').execute()
}
