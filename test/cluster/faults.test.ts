import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { buildApiKey, buildForm, buildUser } from '../factories.js'
import {
  createMigratedTestDatabase,
  TEST_POSTGRES_URL,
  TEST_REDIS_URL,
  type TestDatabase,
} from '../harness.js'
import { generateLoad, get, type Instance, startInstance, TcpProxy, waitFor } from './support.js'

const GENEROUS = { RATE_LIMIT_PER_HOUR: '100000000', RATE_LIMIT_PER_SECOND: '100000' }

/** Reads one unlabelled sample from a Prometheus text page. */
function metric(page: string, name: string): number {
  const line = page.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? Number.NaN : Number(line.split(' ')[1])
}

/**
 * Faults of the services an instance depends on, injected under load by cutting the TCP connection
 * between a real server process and PostgreSQL or Redis. Every recovery must happen inside the same
 * process, without a restart.
 */
describe('an instance whose PostgreSQL or Redis goes away', () => {
  let dir: string
  let testDatabase: TestDatabase
  let database: DatabaseHandle
  let adminId: string
  let instance: Instance | undefined
  let proxy: TcpProxy | undefined

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-faults-'))
    testDatabase = await createMigratedTestDatabase(dir, 'postgres')
    database = openDatabase(testDatabase.url)
    adminId = (await buildUser(database.db, { role: 'global_admin' })).id
    await buildForm(database.db)
  })
  afterEach(async () => {
    await instance?.stop('SIGKILL')
    await proxy?.close()
    instance = undefined
    proxy = undefined
  })
  afterAll(async () => {
    await database.close()
    await testDatabase.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it.each([
    ['stops (connections refused)', 'cut'],
    ['is partitioned away (connections hang)', 'blackhole'],
  ] as const)(
    'answers 503 quickly while PostgreSQL %s and recovers by itself when it returns',
    async (_, fault) => {
      const postgres = new URL(TEST_POSTGRES_URL)
      proxy = await new TcpProxy(postgres.hostname, Number(postgres.port || 5432)).start()
      const viaProxy = new URL(testDatabase.url)
      viaProxy.host = `127.0.0.1:${proxy.port}`
      instance = await startInstance({
        DATABASE_URL: viaProxy.toString(),
        REDIS_URL: TEST_REDIS_URL,
        ...GENEROUS,
      })
      const pid = instance.child.pid
      const key = await buildApiKey(database.db, { userId: adminId })
      const url = `${instance.url}/api/v1/forms`
      expect((await get(url, key.plainKey)).status).toBe(200)

      const load = generateLoad(url, key.plainKey, 4)
      await new Promise((resolve) => setTimeout(resolve, 300))
      if (fault === 'cut') proxy.cut()
      else proxy.blackhole()
      const firstMs = await waitFor(async () => (await get(url, key.plainKey)).status === 503, 10_000)
      const during = await get(url, key.plainKey)
      expect(during.status).toBe(503)
      expect(JSON.parse(during.body)).toEqual({ error: 'service_unavailable', message: expect.any(String) })
      expect(Number(during.headers['retry-after'])).toBeGreaterThan(0)
      // Refused connections fail at once; a silent network costs at most the connect timeout (2 s) or
      // the query timeout (3 s), never an open-ended wait.
      expect(during.ms).toBeLessThan(3500)
      expect((await get(`${instance.url}/readyz`)).status).toBe(503)
      expect((await get(`${instance.url}/healthz`)).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 1000))

      proxy.restore()
      const recoveryMs = await waitFor(async () => (await get(url, key.plainKey)).status === 200, 15_000)
      const stats = await load.stop()
      console.info(
        `PostgreSQL ${fault}: first 503 after ${Math.round(firstMs)} ms, recovered ${Math.round(recoveryMs)} ms after it returned`,
        stats,
      )
      expect((await get(`${instance.url}/readyz`)).status).toBe(200)
      expect(instance.child.pid).toBe(pid)
      expect(instance.child.exitCode).toBeNull()
      // Every request got an answer: 200 before and after, 503 during; none hung or was dropped.
      expect([...stats.failures.keys()]).toEqual([])
      expect([...stats.statuses.keys()].sort()).toEqual([200, 503])
      expect(stats.slowestMs).toBeLessThan(fault === 'cut' ? 1000 : 3500)
    },
  )

  it.each([
    ['stops (connections refused)', 'cut'],
    ['is partitioned away (connections hang)', 'blackhole'],
  ] as const)(
    'keeps serving from memory while Redis %s, says so, and shares counts again when it returns',
    async (_, fault) => {
      const redisUrl = new URL(TEST_REDIS_URL)
      proxy = await new TcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379)).start()
      instance = await startInstance({
        DATABASE_URL: testDatabase.url,
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        ...GENEROUS,
      })
      const key = await buildApiKey(database.db, { userId: adminId })
      const url = `${instance.url}/api/v1/forms`
      const metrics = async () => (await get(`${instance?.url}/metrics`)).body
      expect((await get(url, key.plainKey)).status).toBe(200)
      expect(metric(await metrics(), 'lectern_rate_limiter_shared')).toBe(1)

      const load = generateLoad(url, key.plainKey, 4)
      await new Promise((resolve) => setTimeout(resolve, 300))
      if (fault === 'cut') proxy.cut()
      else proxy.blackhole()
      await waitFor(async () => metric(await metrics(), 'lectern_rate_limiter_fallback') === 1, 5000)
      await new Promise((resolve) => setTimeout(resolve, 1000))
      expect((await get(url, key.plainKey)).status).toBe(200)
      expect(instance.output()).toContain('Redis unreachable')
      expect(JSON.parse((await get(`${instance.url}/readyz`)).body).rateLimits).toBe('memory-fallback')

      proxy.restore()
      const recoveryMs = await waitFor(
        async () => metric(await metrics(), 'lectern_rate_limiter_fallback') === 0,
        15_000,
      )
      const stats = await load.stop()
      console.info(
        `Redis outage: shared counting resumed ${Math.round(recoveryMs)} ms after it returned`,
        stats,
      )
      expect([...stats.failures.keys()]).toEqual([])
      expect([...stats.statuses.keys()]).toEqual([200])
      expect(instance.output()).toContain('Redis reachable again')

      // Counting goes to Redis again: the key's shared hourly count moves with each request.
      const redis = new Redis(TEST_REDIS_URL)
      try {
        const countKey = `lectern:rl:{${key.id}}:h`
        const before = Number(await redis.hget(countKey, 'count'))
        expect((await get(url, key.plainKey)).status).toBe(200)
        expect(Number(await redis.hget(countKey, 'count'))).toBe(before + 1)
      } finally {
        redis.disconnect()
      }
    },
  )

  it('on SIGTERM leaves the rotation, finishes in-flight requests, refuses new ones and exits 0', async () => {
    instance = await startInstance({
      DATABASE_URL: testDatabase.url,
      REDIS_URL: TEST_REDIS_URL,
      SHUTDOWN_GRACE_MS: '1000',
      ...GENEROUS,
    })
    const key = await buildApiKey(database.db, { userId: adminId })
    const url = `${instance.url}/api/v1/forms`
    // A load balancer in miniature: it routes to the instance while /readyz answers 200.
    let inRotation = true
    const balancer = setInterval(async () => {
      inRotation = await get(`${instance?.url}/readyz`, undefined, 1000)
        .then((answer) => answer.status === 200)
        .catch(() => false)
    }, 50)
    const load = generateLoad(url, key.plainKey, 16, () => inRotation)
    try {
      // Traffic flows before the signal, however slow the machine: the shutdown then has requests in flight.
      await waitFor(async () => load.stats.count > 50, 10_000)
      const started = performance.now()
      const code = await instance.stop('SIGTERM')
      const exitMs = performance.now() - started
      const stats = await load.stop()
      console.info(`SIGTERM under load: exited ${code} after ${Math.round(exitMs)} ms`, stats)
      expect(code).toBe(0)
      expect(exitMs).toBeLessThan(11_000)
      // Every request sent got its answer; none was cut off or lost.
      expect([...stats.failures.keys()]).toEqual([])
      expect([...stats.statuses.keys()]).toEqual([200])
      expect(stats.count).toBeGreaterThan(50)
      await expect(get(url, key.plainKey)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    } finally {
      clearInterval(balancer)
      await load.stop()
    }
  })
})
