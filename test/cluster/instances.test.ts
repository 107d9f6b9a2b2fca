import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { createServices, type Services } from '../../src/services/index.js'
import { runCli, runCliProcess } from '../cli/run-cli.js'
import { buildApiKey, buildForm, buildSubmission, buildUser } from '../factories.js'
import { createMigratedTestDatabase, TEST_REDIS_URL, type TestDatabase } from '../harness.js'
import { get, type Instance, startInstance } from './support.js'

/**
 * Two real server processes share one PostgreSQL schema and one Redis, as instances behind a load
 * balancer do. Each property is checked many times over, so that a race would show.
 */
describe('two instances sharing PostgreSQL and Redis', () => {
  let dir: string
  let testDatabase: TestDatabase
  let database: DatabaseHandle
  let services: Services
  let a: Instance
  let b: Instance
  let adminId: string
  /**
   * The CLI against the shared database: the built binary in a process of its own in the first
   * round, in the test's process after that (the instances see the same writes either way, and a
   * process start is most of a round's time).
   */
  const cli = (round: number, args: string[]) =>
    (round === 0 ? runCliProcess : runCli)(args, { databaseUrl: testDatabase.url })

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-cluster-'))
    testDatabase = await createMigratedTestDatabase(dir, 'postgres')
    database = openDatabase(testDatabase.url)
    services = createServices(database)
    adminId = (await buildUser(database.db, { email: 'admin@example.com', role: 'global_admin' })).id
    await buildUser(database.db, { email: 'backup@example.com', role: 'global_admin' })
    const form = await buildForm(database.db, { id: 'form_contact' })
    await buildSubmission(database.db, { formId: form.id })
    const env = { DATABASE_URL: testDatabase.url, REDIS_URL: TEST_REDIS_URL }
    ;[a, b] = await Promise.all([startInstance(env), startInstance(env)])
  })

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await database?.close()
    await testDatabase?.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('lets exactly 10 of 11 simultaneous requests through for a fresh key spread over both, every time', async () => {
    for (let round = 0; round < 15; round++) {
      const key = await buildApiKey(database.db, { userId: adminId })
      const answers = await Promise.all(
        Array.from({ length: 11 }, (_, i) => get(`${(i % 2 === 0 ? a : b).url}/api/v1/forms`, key.plainKey)),
      )
      const statuses = answers.map((answer) => answer.status).sort()
      expect(statuses.filter((s) => s === 200)).toHaveLength(10)
      expect(statuses.filter((s) => s === 429)).toHaveLength(1)
    }
  })

  it('shares one hourly count, so Remaining falls by one per request whichever instance answers', async () => {
    const key = await buildApiKey(database.db, { userId: adminId })
    const remaining: number[] = []
    for (let i = 0; i < 8; i++) {
      const answer = await get(`${(i % 2 === 0 ? a : b).url}/api/v1/page-builder`, key.plainKey)
      expect(answer.status).toBe(200)
      remaining.push(Number(answer.headers['x-ratelimit-remaining']))
    }
    expect(remaining).toEqual([999, 998, 997, 996, 995, 994, 993, 992])
  })

  it('refuses a key revoked or deactivated on the very next request on both instances, every time', async () => {
    for (let round = 0; round < 10; round++) {
      const key = await buildApiKey(database.db, { userId: adminId })
      expect((await get(`${a.url}/api/v1/forms`, key.plainKey)).status).toBe(200)
      expect((await get(`${b.url}/api/v1/forms`, key.plainKey)).status).toBe(200)
      if (round % 2 === 0) {
        await services.keys.revokeApiKey(key.id)
        for (const instance of [a, b]) {
          const answer = await get(`${instance.url}/api/v1/forms`, key.plainKey)
          expect(answer.status).toBe(401)
          expect(JSON.parse(answer.body).error).toBe('invalid_api_key')
        }
      } else {
        await services.keys.deactivateApiKey(key.id)
        for (const instance of [a, b]) {
          expect(JSON.parse((await get(`${instance.url}/api/v1/forms`, key.plainKey)).body).error).toBe(
            'api_key_inactive',
          )
        }
        await services.keys.activateApiKey(key.id)
        for (const instance of [a, b])
          expect((await get(`${instance.url}/api/v1/forms`, key.plainKey)).status).toBe(200)
      }
    }
  })

  it('refuses a revoked key on every request sent after the revoke, even while a burst of its requests is in flight', async () => {
    for (let round = 0; round < 5; round++) {
      const key = await buildApiKey(database.db, { userId: adminId })
      // Eight requests at a time with one key on each instance, so lookups of it are always in flight.
      const answers: Array<{ sentAt: number; status: number }> = []
      let revokedAt = Number.POSITIVE_INFINITY
      let stop = false
      const loop = async (instance: Instance) => {
        while (!stop) {
          const sentAt = performance.now()
          const { status } = await get(`${instance.url}/api/v1/forms`, key.plainKey)
          answers.push({ sentAt, status })
        }
      }
      const loops = Array.from({ length: 16 }, (_, i) => loop(i % 2 === 0 ? a : b))
      await new Promise((resolve) => setTimeout(resolve, 150))
      await services.keys.revokeApiKey(key.id)
      revokedAt = performance.now()
      await new Promise((resolve) => setTimeout(resolve, 150))
      stop = true
      await Promise.all(loops)
      const after = answers.filter((answer) => answer.sentAt > revokedAt)
      expect(after.length).toBeGreaterThan(0)
      expect(after.filter((answer) => answer.status !== 401)).toEqual([])
      expect(answers.some((answer) => answer.sentAt < revokedAt && answer.status !== 401)).toBe(true)
    }
  })

  it('applies a demotion or a disable made by the CLI on the very next request on both instances', async () => {
    const user = await buildUser(database.db, { email: 'ops@example.com', role: 'global_admin' })
    const key = await buildApiKey(database.db, { userId: user.id })
    for (let round = 0; round < 3; round++) {
      for (const instance of [a, b]) {
        expect(
          (await get(`${instance.url}/api/v1/forms/form_contact/submissions`, key.plainKey)).status,
        ).toBe(200)
      }
      expect((await cli(round, ['users', 'set-role', user.email, 'editor'])).code).toBe(0)
      for (const instance of [a, b]) {
        expect(
          (await get(`${instance.url}/api/v1/forms/form_contact/submissions`, key.plainKey)).status,
        ).toBe(403)
      }
      expect((await cli(round, ['users', 'disable', user.email])).code).toBe(0)
      for (const instance of [a, b]) {
        expect(JSON.parse((await get(`${instance.url}/api/v1/forms`, key.plainKey)).body).error).toBe(
          'api_key_inactive',
        )
      }
      expect((await cli(round, ['users', 'enable', user.email])).code).toBe(0)
      expect((await cli(round, ['users', 'set-role', user.email, 'global_admin'])).code).toBe(0)
    }
  })

  it('serves a content change made by the CLI on the very next request on both instances, every time', async () => {
    for (let round = 0; round < 5; round++) {
      // A fresh key per round keeps these requests clear of the 10-per-second burst limit.
      const key = await buildApiKey(database.db, { userId: adminId })
      const url = (instance: Instance) => `${instance.url}/api/v1/page-builder/redirects?pageSize=100`
      const before = await Promise.all(
        [a, b].map(async (instance) => JSON.parse((await get(url(instance), key.plainKey)).body)),
      )
      const file = join(dir, `round-${round}.json`)
      writeFileSync(file, JSON.stringify({ redirects: [{ fromPath: `/moved-${round}`, toPath: '/here' }] }))
      expect((await cli(round, ['import', file])).code).toBe(0)
      for (const [i, instance] of [a, b].entries()) {
        const after = JSON.parse((await get(url(instance), key.plainKey)).body)
        expect(after.meta.total).toBe(before[i].meta.total + 1)
        expect(after.data.map((r: { fromPath: string }) => r.fromPath)).toContain(`/moved-${round}`)
      }
    }
  })
})
