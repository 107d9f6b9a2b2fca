import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { BIN, freePort } from '../cli/run-cli.js'
import { buildApiKey, buildUser } from '../factories.js'
import { createMigratedTestDatabase, TEST_DIALECT, TEST_REDIS_URL } from '../harness.js'

/**
 * A TCP proxy the test controls, standing between a server process and PostgreSQL or Redis, so a
 * test can cut the connection (as if the service had stopped) and restore it, without touching the
 * real service that other tests share.
 */
export class TcpProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  private mode: 'up' | 'cut' | 'blackhole' = 'up'
  port = 0

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      if (this.mode === 'cut') {
        client.destroy()
        return
      }
      if (this.mode === 'blackhole') {
        this.sockets.add(client)
        client.on('close', () => this.sockets.delete(client))
        client.on('error', () => {})
        client.resume()
        return
      }
      const upstream = connect(this.targetPort, this.targetHost)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('close', () => this.sockets.delete(socket))
        socket.on('error', () => {})
      }
      client.pipe(upstream).pipe(client)
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve))
    this.port = (this.server.address() as { port: number }).port
    return this
  }

  /** Drops every open connection and refuses new ones, like a service that went away. */
  cut(): void {
    this.mode = 'cut'
    for (const socket of this.sockets) socket.destroy()
  }

  /**
   * Swallows all traffic without closing anything, like a network partition: connections stay
   * open and silent, so only the client's own timeouts can notice.
   */
  blackhole(): void {
    this.mode = 'blackhole'
    for (const socket of this.sockets) {
      socket.unpipe()
      socket.removeAllListeners('data')
      socket.resume()
    }
  }

  /** Lets new connections through again; connections from before the fault stay broken. */
  restore(): void {
    for (const socket of this.sockets) socket.destroy()
    this.mode = 'up'
  }

  async close(): Promise<void> {
    this.cut()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve())
  }
}

export interface Instance {
  url: string
  child: ChildProcess
  /** Everything the process wrote to stdout and stderr so far (JSON log lines). */
  output(): string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/** How long an instance may take to listen: under the 60 s its tests' hooks allow, so its own output is reported. */
const START_TIMEOUT_MS = 45_000

/** Starts `lectern serve` as its own process on a free port and waits until it listens. */
export async function startInstance(env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(await freePort())], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (chunk) => {
    output += chunk
  })
  child.stderr?.on('data', (chunk) => {
    output += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: CI runs other Node.js lines' checks at a lower priority beside the main suite, and on
    // a slow two-core machine an instance there waited over 20 s for the CPU before it printed anything.
    const timer = setTimeout(() => reject(new Error(`instance did not start: ${output}`)), START_TIMEOUT_MS)
    const check = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout?.on('data', check)
    exited.then((code) => reject(new Error(`instance exited with ${code}: ${output}`)))
  })
  return {
    url,
    child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal)
      return exited
    },
  }
}

/**
 * Two instances on a database of their own, with key limits that never refuse (on PostgreSQL counted
 * in the test Redis, as instances of one deployment count them), a global admin's key, and a handle
 * of the test's on the same database.
 */
export interface PairOnNewDatabase {
  a: Instance
  b: Instance
  /** The test's own connection to the same database. */
  database: DatabaseHandle
  url: string
  /** A directory of the test's own, removed with the database. */
  dir: string
  /** A global admin's API key. */
  key: string
  /** Stops both instances and removes the database. */
  close(): Promise<void>
}

/** A new migrated database, filled by `prepare`, then two instances on it; `env` adds to or overrides their settings. */
export async function startPairOnNewDatabase(
  prepare: (database: DatabaseHandle) => Promise<void>,
  env: Record<string, string> = {},
): Promise<PairOnNewDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'lectern-pair-'))
  const testDatabase = await createMigratedTestDatabase(dir)
  const database = openDatabase(testDatabase.url)
  const admin = await buildUser(database.db, { email: 'admin@example.com', role: 'global_admin' })
  const key = (await buildApiKey(database.db, { userId: admin.id })).plainKey
  await prepare(database)
  const settings: Record<string, string> = {
    DATABASE_URL: testDatabase.url,
    RATE_LIMIT_PER_SECOND: '100000',
    RATE_LIMIT_PER_HOUR: '1000000',
    ...(TEST_DIALECT === 'postgres' ? { REDIS_URL: TEST_REDIS_URL } : {}),
    ...env,
  }
  const [a, b] = await Promise.all([startInstance(settings), startInstance(settings)])
  return {
    a,
    b,
    database,
    url: testDatabase.url,
    dir,
    key,
    async close() {
      await Promise.all([a.stop(), b.stop()])
      await database.close()
      await testDatabase.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  ms: number
}

/**
 * One GET on a new connection (no keep-alive), so each request is accepted or refused on its own
 * and a test can tell a refused connection from a request lost in flight.
 */
export function get(url: string, key?: string, timeoutMs = 15_000): Promise<Answer> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { agent: false, headers: key ? { authorization: `Bearer ${key}` } : {}, timeout: timeoutMs },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => {
          body += chunk
        })
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            ms: performance.now() - started,
          }),
        )
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end()
  })
}

/** Polls `probe` until it returns true or `timeoutMs` passes; resolves with the time it took. */
export async function waitFor(probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < timeoutMs) {
    if (await probe().catch(() => false)) return performance.now() - started
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`condition not met within ${timeoutMs} ms`)
}

export interface LoadStats {
  statuses: Map<number, number>
  /** Requests that failed without a response, by error code (ECONNREFUSED, ECONNRESET, …). */
  failures: Map<string, number>
  slowestMs: number
  count: number
}

/**
 * Keeps `concurrency` requests in flight against `url` until `stop()` is called; resolves with what
 * every request got. Each request uses its own connection (see `get`). While `routing()` is false
 * no new request is sent.
 */
export function generateLoad(
  url: string,
  key: string,
  concurrency: number,
  routing: () => boolean = () => true,
) {
  const stats: LoadStats = { statuses: new Map(), failures: new Map(), slowestMs: 0, count: 0 }
  let running = true
  const worker = async () => {
    while (running) {
      // Like a load balancer, send nothing to an instance that is out of rotation.
      if (!routing()) {
        await new Promise((resolve) => setTimeout(resolve, 10))
        continue
      }
      try {
        const answer = await get(url, key, 10_000)
        stats.statuses.set(answer.status, (stats.statuses.get(answer.status) ?? 0) + 1)
        stats.slowestMs = Math.max(stats.slowestMs, answer.ms)
      } catch (error) {
        const code = (error as { code?: string }).code ?? (error as Error).message
        stats.failures.set(code, (stats.failures.get(code) ?? 0) + 1)
        // A refused connection answers at once; pause so a stopped server is not hammered in a tight loop.
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      stats.count += 1
    }
  }
  const workers = Array.from({ length: concurrency }, worker)
  return {
    stats,
    async stop(): Promise<LoadStats> {
      running = false
      await Promise.all(workers)
      return stats
    },
  }
}

export interface RedisServer {
  port: number
  url: string
  /** Stops it at once, as a crash would: without persistence every count is gone. */
  kill(): Promise<void>
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>
}

/**
 * A Redis server of the test's own on a free port, without persistence (`--save ''`,
 * `--appendonly no`), so a test can stop and restart it without touching the shared one.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const launch = () =>
    new Promise<void>((resolve, reject) => {
      const started = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      )
      child = started
      let output = ''
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000)
      started.stdout?.on('data', (chunk) => {
        output += chunk
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer)
          resolve()
        }
      })
      started.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)))
    })
  const kill = async () => {
    const running = child
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGKILL')
    await exited
  }
  await launch()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    async restart() {
      await kill()
      await launch()
    },
  }
}
