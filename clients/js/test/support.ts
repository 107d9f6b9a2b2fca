import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { buildApiKey } from '../../../test/factories.js'
import { createTestContext, type TestContext, type TestContextOptions } from '../../../test/harness.js'
import { type FetchFunction, Lectern, type LecternOptions } from '../src/index.js'

export interface RunningLectern {
  ctx: TestContext
  /** Where the server listens, e.g. `http://127.0.0.1:41234`. */
  baseUrl: string
  /** `Bearer …`-less API key of a global admin. */
  apiKey: string
  /** A client of this server with the admin's key; `options` override the defaults. */
  client(options?: Partial<LecternOptions>): Lectern
}

/** A real Lectern server listening on a free port, with an admin's key. */
export async function startLectern(options: TestContextOptions = {}): Promise<RunningLectern> {
  const ctx = await createTestContext(options)
  const baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' })
  const { plainKey: apiKey } = await buildApiKey(ctx.database.db)
  return { ctx, baseUrl, apiKey, client: (overrides) => new Lectern({ baseUrl, apiKey, ...overrides }) }
}

/** A `fetch` that records the status of every response it passes on, and the URL asked for. */
export function recordingFetch(): { fetch: FetchFunction; calls: { url: string; status: number }[] } {
  const calls: { url: string; status: number }[] = []
  return {
    calls,
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      calls.push({ url: input, status: response.status })
      return response
    },
  }
}

/** A real HTTP server on 127.0.0.1 that answers as `handler` says: for what Lectern itself never does. */
export interface Misbehaving {
  baseUrl: string
  /** The paths (with their query) asked for, in order. */
  requests: string[]
  close(): Promise<void>
}

export async function startMisbehaving(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<Misbehaving> {
  const requests: string[] = []
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    requests.push(request.url ?? '')
    handler(request, response)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/**
 * A list endpoint that answers every page full, `pageSize` items made by `item`, with a `meta` that
 * announces one page more than the one asked for: a walk that trusts each page's `totalPages`
 * never ends. With `total`, an honest list of that many items instead.
 */
export function listOf(
  item: (index: number) => object,
  total?: () => number,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const query = new URL(request.url ?? '/', 'http://localhost').searchParams
    const page = Number(query.get('page') ?? 1)
    const pageSize = Number(query.get('pageSize') ?? 20)
    const count = total?.() ?? (page + 1) * pageSize
    const first = (page - 1) * pageSize
    const data = Array.from({ length: Math.max(0, Math.min(pageSize, count - first)) }, (_, n) =>
      item(first + n),
    )
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(
      JSON.stringify({
        data,
        meta: { total: count, page, pageSize, totalPages: Math.ceil(count / pageSize) },
      }),
    )
  }
}
