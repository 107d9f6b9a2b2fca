import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/database.js'
import { openDatabase } from '../../src/db/database.js'
import { type Instance, startInstance } from '../cluster/support.js'
import { buildApiKey, buildForm } from '../factories.js'
import { createMigratedTestDatabase, TEST_DIALECT, TEST_REDIS_URL, type TestDatabase } from '../harness.js'

const GENEROUS = { RATE_LIMIT_PER_HOUR: '100000000', RATE_LIMIT_PER_SECOND: '100000' }

interface Outcome {
  status: number
  closes: boolean
}

/** One GET over a keep-alive agent; says whether the server asked to close the connection. */
function keepAliveGet(agent: Agent, url: string, key: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { agent, headers: { authorization: `Bearer ${key}` }, timeout: 10_000 },
      (res) => {
        res.resume()
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, closes: res.headers.connection?.toLowerCase() === 'close' }),
        )
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject)
    req.end()
  })
}

/**
 * A balancer in miniature in front of two instances, as a Kubernetes Service or a connection-level
 * balancer behaves: it polls `/readyz`, opens each new connection to a ready instance, and keeps a
 * keep-alive connection pinned to its instance until that connection is closed. Each worker holds
 * one keep-alive connection and sends requests back to back. Every failed request is counted: an
 * error without a response (ECONNRESET, ECONNREFUSED) or any status but 200.
 */
function balancedLoad(instances: Instance[], key: string, workers: number) {
  const ready = new Map(instances.map((instance) => [instance.url, true]))
  const poller = setInterval(() => {
    for (const instance of instances) {
      keepAliveGet(new Agent(), `${instance.url}/readyz`, key).then(
        (outcome) => ready.set(instance.url, outcome.status === 200),
        () => ready.set(instance.url, false),
      )
    }
  }, 100)
  const failures = new Map<string, number>()
  let served = 0
  let running = true
  let turn = 0
  const worker = async () => {
    let pinned: { url: string; agent: Agent } | undefined
    while (running) {
      if (!pinned) {
        const candidates = instances.filter((instance) => ready.get(instance.url))
        if (candidates.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 10))
          continue
        }
        const url = candidates[turn++ % candidates.length].url
        pinned = { url, agent: new Agent({ keepAlive: true, maxSockets: 1 }) }
      }
      try {
        const outcome = await keepAliveGet(pinned.agent, `${pinned.url}/api/v1/forms`, key)
        if (outcome.status === 200) served += 1
        else failures.set(String(outcome.status), (failures.get(String(outcome.status)) ?? 0) + 1)
        if (outcome.closes) pinned = undefined
      } catch (error) {
        const code = (error as { code?: string }).code ?? (error as Error).message
        failures.set(code, (failures.get(code) ?? 0) + 1)
        pinned?.agent.destroy()
        pinned = undefined
      }
    }
    pinned?.agent.destroy()
  }
  const running_ = Array.from({ length: workers }, worker)
  return {
    async stop() {
      running = false
      clearInterval(poller)
      await Promise.all(running_)
      return { served, failures: Object.fromEntries(failures) }
    },
  }
}

describe('SIGTERM with a grace period under keep-alive load', () => {
  let dir: string
  let testDatabase: TestDatabase
  let database: DatabaseHandle
  let key: string
  const env = () => ({
    DATABASE_URL: testDatabase.url,
    ...(TEST_DIALECT === 'postgres' ? { REDIS_URL: TEST_REDIS_URL } : {}),
    SHUTDOWN_GRACE_MS: '1000',
    ...GENEROUS,
  })

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-shutdown-'))
    testDatabase = await createMigratedTestDatabase(dir)
    database = openDatabase(testDatabase.url)
    await buildForm(database.db)
    key = (await buildApiKey(database.db)).plainKey
  })
  afterAll(async () => {
    await database.close()
    await testDatabase.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('fails no request: connections are closed after their response while the instance drains', async () => {
    const staying = await startInstance(env())
    try {
      for (let round = 0; round < 3; round++) {
        const leaving = await startInstance(env())
        const load = balancedLoad([leaving, staying], key, 12)
        await new Promise((resolve) => setTimeout(resolve, 700))
        const code = await leaving.stop('SIGTERM')
        await new Promise((resolve) => setTimeout(resolve, 200))
        const result = await load.stop()
        console.info(`round ${round}: exit ${code}, ${result.served} served`, result.failures)
        expect(code).toBe(0)
        expect(result.served).toBeGreaterThan(100)
        expect(result.failures).toEqual({})
      }
    } finally {
      await staying.stop('SIGKILL')
    }
  }, 90_000)
})
