import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import {
  get,
  type Instance,
  type RedisServer,
  startInstance,
  startRedisServer,
  waitFor,
} from '../cluster/support.js'
import { buildApiKey, buildForm, buildUser } from '../factories.js'
import { createMigratedTestDatabase, type TestDatabase } from '../harness.js'

const PER_HOUR = 20
const LIMITS = { RATE_LIMIT_PER_HOUR: String(PER_HOUR), RATE_LIMIT_PER_SECOND: '1000' }

/**
 * The hourly quota across Redis failures, with real server processes and a Redis of the test's own
 * (no persistence) that the test kills and restarts. The shared Redis is never touched.
 */
describe('hourly quotas when Redis fails', () => {
  let dir: string
  let testDatabase: TestDatabase
  let database: DatabaseHandle
  let adminId: string
  let redis: RedisServer
  let instances: Instance[] = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-redis-failover-'))
    testDatabase = await createMigratedTestDatabase(dir)
    database = openDatabase(testDatabase.url)
    adminId = (await buildUser(database.db, { role: 'global_admin' })).id
    await buildForm(database.db)
    redis = await startRedisServer()
  })
  afterEach(async () => {
    await Promise.all(instances.map((instance) => instance.stop('SIGKILL')))
    instances = []
  })
  afterAll(async () => {
    await redis.kill()
    await database.close()
    await testDatabase.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  const start = async () => {
    const instance = await startInstance({ DATABASE_URL: testDatabase.url, REDIS_URL: redis.url, ...LIMITS })
    instances.push(instance)
    return instance
  }
  const limiterOf = async (instance: Instance) =>
    JSON.parse((await get(`${instance.url}/readyz`)).body).rateLimits as string

  /** Sends requests with `key`, round robin over `targets`, until each answers 429; counts the 200s. */
  async function spendTheRest(targets: Instance[], key: string): Promise<number> {
    let allowed = 0
    const exhausted = new Set<Instance>()
    for (let i = 0; exhausted.size < targets.length && i < 3 * PER_HOUR; i++) {
      const target = targets[i % targets.length]
      const answer = await get(`${target.url}/api/v1/forms`, key)
      if (answer.status === 200) allowed += 1
      else if (answer.status === 429) exhausted.add(target)
      else throw new Error(`unexpected ${answer.status}: ${answer.body}`)
    }
    return allowed
  }

  it('carries the count Redis last gave into memory when Redis goes away, instead of a fresh hour', async () => {
    await redis.restart()
    const instance = await start()
    const key = await buildApiKey(database.db, { userId: adminId })
    const url = `${instance.url}/api/v1/forms`
    for (let i = 0; i < 15; i++) expect((await get(url, key.plainKey)).status).toBe(200)

    await redis.kill()
    const first = await get(url, key.plainKey)
    expect(first.status).toBe(200)
    expect(await limiterOf(instance)).toBe('memory-fallback')
    expect(first.headers['x-ratelimit-remaining']).toBe(String(PER_HOUR - 16))
    expect(await spendTheRest([instance], key.plainKey)).toBe(PER_HOUR - 16)
  })

  it('gives a Redis that restarted empty the counts back, instead of fresh quotas on every instance', async () => {
    await redis.restart()
    const [one, other] = [await start(), await start()]
    const key = await buildApiKey(database.db, { userId: adminId })
    for (let i = 0; i < 14; i++)
      expect((await get(`${(i % 2 === 0 ? one : other).url}/api/v1/forms`, key.plainKey)).status).toBe(200)

    await redis.restart()
    // Both instances count in Redis again (another key wakes them), before the key is used again.
    const probe = await buildApiKey(database.db, { userId: adminId })
    for (const instance of [one, other]) {
      await waitFor(async () => {
        const answer = await get(`${instance.url}/api/v1/forms`, probe.plainKey)
        return answer.status === 200 && (await limiterOf(instance)) === 'redis'
      })
    }

    // 14 were used before the restart, the last through `other`: the 6 left are granted, not a fresh
    // 20. (Each instance brings back the last count it saw; the highest one wins.)
    const after = await spendTheRest([other, one], key.plainKey)
    expect(after).toBe(PER_HOUR - 14)
  })
})
