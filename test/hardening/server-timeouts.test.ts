import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { SERVER_TIMEOUTS } from '../../src/app.js'
import { createTestContext, type TestContext } from '../harness.js'

/** Small timeouts, so that the real socket behaviour can be watched without waiting minutes. */
const SHORT = {
  requestTimeout: 900,
  headersTimeout: 500,
  keepAliveTimeout: 300,
  connectionsCheckingInterval: 100,
}

interface RawConnection {
  socket: Socket
  /** Everything received so far. */
  received(): string
  /** Resolves with everything received once the server closes the connection. */
  closed: Promise<string>
}

function open(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      data += chunk
    })
    socket.on('error', () => {})
    const closed = new Promise<string>((done) => socket.on('close', () => done(data)))
    socket.once('connect', () => resolve({ socket, received: () => data, closed }))
    socket.once('error', reject)
  })
}

/** Writes one byte at a time every `everyMs` until the socket closes; returns a stop function. */
function trickle(socket: Socket, bytes: string, everyMs: number): () => void {
  let index = 0
  const timer = setInterval(() => {
    if (socket.destroyed || index >= bytes.length) return
    socket.write(bytes[index++])
  }, everyMs)
  socket.on('close', () => clearInterval(timer))
  return () => clearInterval(timer)
}

/** Fails if `promise` has not settled within `ms`: a connection the server never closes. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} was still open after ${ms} ms`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as unknown

describe('the server timeouts', () => {
  let ctx: TestContext
  afterEach(() => ctx.close())

  it('are the documented production values on the server Fastify listens with', async () => {
    ctx = await createTestContext()
    const server = ctx.app.server
    expect(server.keepAliveTimeout).toBe(5_000)
    expect(server.requestTimeout).toBe(30_000)
    expect(server.headersTimeout).toBe(10_000)
    expect(server.timeout).toBe(SERVER_TIMEOUTS.connectionTimeout)
  })

  it('cut off a body trickled one byte at a time at the request timeout, with the 408 envelope', async () => {
    ctx = await createTestContext({ timeouts: SHORT })
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = ctx.app.server.address() as { port: number }
    const connection = await open(port)
    const body = 'email=someone%40example.com&password=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'
    connection.socket.write(
      `POST /admin/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`,
    )
    // Each byte arrives well inside the socket's idle timeout: only the request timeout can stop it.
    trickle(connection.socket, body, 100)
    const raw = await within(connection.closed, 8_000, 'the trickling connection')
    expect(raw).toMatch(/^HTTP\/1\.1 408 /)
    expect(raw).toContain('Content-Type: application/json; charset=utf-8')
    expect(bodyOf(raw)).toEqual({ error: 'request_timeout', message: expect.any(String) })
  })

  it('close an idle keep-alive connection after the keep-alive timeout', async () => {
    ctx = await createTestContext({ timeouts: SHORT })
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = ctx.app.server.address() as { port: number }
    const connection = await open(port)
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n')
    const raw = await within(connection.closed, 8_000, 'the idle keep-alive connection')
    expect(raw).toMatch(/^HTTP\/1\.1 200 /)
    expect(raw).toMatch(/Keep-Alive: timeout=0?\.?3?/i)
  })

  it('cut off headers that never finish at the headers timeout, with the 408 envelope', async () => {
    ctx = await createTestContext({ timeouts: SHORT })
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = ctx.app.server.address() as { port: number }
    const connection = await open(port)
    connection.socket.write('GET /api/v1/forms HTTP/1.1\r\nHost: localhost\r\n')
    trickle(connection.socket, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 50)
    const raw = await within(connection.closed, 8_000, 'the slow-headers connection')
    expect(raw).toMatch(/^HTTP\/1\.1 408 /)
    expect(bodyOf(raw)).toEqual({ error: 'request_timeout', message: expect.any(String) })
  })

  it('do not let many slow or silent connections accumulate', async () => {
    ctx = await createTestContext({ timeouts: SHORT })
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = ctx.app.server.address() as { port: number }
    const connections: RawConnection[] = []
    for (let i = 0; i < 60; i++) {
      const connection = await open(port)
      if (i % 3 === 0) {
        // Silent: connects and sends nothing.
      } else if (i % 3 === 1) {
        connection.socket.write('GET /api/v1/forms HTTP/1.1\r\nHost: localhost\r\n')
        trickle(connection.socket, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 200)
      } else {
        connection.socket.write(
          'POST /admin/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 500\r\n\r\n',
        )
        trickle(connection.socket, 'a'.repeat(500), 200)
      }
      connections.push(connection)
    }
    const count = () =>
      new Promise<number>((resolve, reject) =>
        ctx.app.server.getConnections((error, n) => (error ? reject(error) : resolve(n))),
      )
    expect(await count()).toBeGreaterThanOrEqual(50)
    await within(Promise.all(connections.map((c) => c.closed)), 10_000, 'one of the slow connections')
    // The server's side finishes closing a moment after the client sees the end.
    const drained = async () => {
      while ((await count()) > 0) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await within(drained(), 5_000, 'a server-side socket')
    expect(await count()).toBe(0)
  })
})
