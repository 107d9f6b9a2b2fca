import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, runCliProcess } from '../cli/run-cli.js'
import { startInstance } from '../cluster/support.js'
import { createTestContext, TEST_DIALECT, type TestContext } from '../harness.js'
import { postForm } from '../intake/support.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { notifyingServices, openForm, type Receiver, SECRET_KEY, startReceiver } from './support.js'

async function until<T>(check: () => T | Promise<T>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('webhooks across processes', () => {
  let ctx: TestContext
  const receivers: Receiver[] = []
  const env = () => ({
    DATABASE_URL: ctx.databaseUrl,
    SECRET_KEY,
    WEBHOOK_ALLOW_PRIVATE: 'true',
  })

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
  })
  afterAll(async () => {
    for (const receiver of receivers) await receiver.close()
    await ctx.close()
  })

  it('manages endpoints from the command line: the secret alone on the last line, JSON lists, audit', async () => {
    const receiver = await startReceiver()
    receivers.push(receiver)
    const form = await openForm(ctx)
    const added = await runCli(
      ['webhooks', 'add', '--url', receiver.url, '--events', 'submission.created', '--form', form],
      { env: env() },
    )
    expect(added.code).toBe(0)
    const id = added.lines[0]
    expect(id).toMatch(/^whk_[A-Za-z0-9]{20}$/)
    expect(added.lines.at(-1)).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const list = await runCli(['webhooks', 'list', '--json'], { env: env() })
    expect(JSON.parse(list.stdout)).toEqual([
      {
        id,
        url: receiver.url,
        events: ['submission.created'],
        formId: form,
        status: 'active',
        createdAt: expect.any(String),
      },
    ])
    // The stored secret is not the one printed.
    const stored = await ctx.database.db
      .selectFrom('webhook_endpoints')
      .select('secret')
      .executeTakeFirstOrThrow()
    expect(stored.secret).not.toContain(added.lines.at(-1)?.slice(6, 20))
    const rotated = await runCli(['webhooks', 'rotate-secret', id], { env: env() })
    expect(rotated.code).toBe(0)
    expect(rotated.lines.at(-1)).toMatch(/^whsec_/)
    expect(rotated.lines.at(-1)).not.toBe(added.lines.at(-1))
    await ctx.services.importer.importRecords({ submissions: [{ formId: form, data: { a: 1 } }] })
    const deliveries = await runCli(['webhooks', 'deliveries', id, '--json', '--limit', '5'], { env: env() })
    expect(JSON.parse(deliveries.stdout)).toEqual([
      expect.objectContaining({
        eventId: expect.stringMatching(/^evt_/),
        type: 'submission.created',
        attempts: 0,
        lastStatus: null,
        nextAttemptAt: expect.any(String),
        deliveredAt: null,
      }),
    ])
    const resent = await runCli(
      ['webhooks', 'resend', JSON.parse(deliveries.stdout)[0].eventId, '--endpoint', id],
      { env: env() },
    )
    expect(resent.code).toBe(0)
    expect((await runCli(['webhooks', 'remove', id], { env: env() })).code).toBe(0)
    const gone = await runCli(['webhooks', 'remove', id], { env: env() })
    expect(gone.code).toBe(1)
    expect(gone.stderr).toContain(`Webhook endpoint '${id}' not found`)
    const audit = await runCli(['audit', 'list', '--json', '--limit', '10'], { env: env() })
    const actions = (JSON.parse(audit.stdout) as { action: string }[]).map((entry) => entry.action)
    for (const action of ['webhook.created', 'webhook.secret_rotated', 'webhook.resent', 'webhook.deleted'])
      expect(actions).toContain(action)
  }, 180_000)

  it('refuses a private address without WEBHOOK_ALLOW_PRIVATE, and an unknown event, with one clear line', async () => {
    const { WEBHOOK_ALLOW_PRIVATE: _, ...strict } = env()
    // A process test: the built binary reads the setting from the environment it is started with.
    const refused = await runCliProcess(['webhooks', 'add', '--url', 'http://127.0.0.1:9/hook'], {
      env: strict,
    })
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split('\n')[0]).toMatch(
      /^lectern: URL host '127\.0\.0\.1' resolves to 127\.0\.0\.1/,
    )
    const unknown = await runCli(['webhooks', 'add', '--url', 'https://example.com/', '--events', 'x.y'], {
      env: env(),
    })
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("Unknown event 'x.y'")
  })

  it.runIf(TEST_DIALECT === 'postgres')(
    'refuses to add an endpoint on PostgreSQL without SECRET_KEY',
    async () => {
      const { SECRET_KEY: _, ...keyless } = env()
      const refused = await runCli(['webhooks', 'add', '--url', 'http://127.0.0.1:9/hook'], { env: keyless })
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('SECRET_KEY')
    },
  )

  // The two tests below run at once, each on a database of its own: most of the first is spent
  // waiting out the dead server's delivery lease, which no setting shortens.
  it.concurrent('delivers after a server is killed mid-delivery and another starts: at worst twice, with one webhook-id', async ({
    expect,
    onTestFinished,
  }) => {
    const own = await createTestContext(GENEROUS_LIMITS)
    onTestFinished(() => own.close())
    const ownEnv = { ...env(), DATABASE_URL: own.databaseUrl }
    // The first request is never answered: the server dies while it waits.
    const receiver = await startReceiver((_, index) => (index === 0 ? null : 200))
    receivers.push(receiver)
    const services = notifyingServices(own)
    const form = await openForm(own)
    const { endpoint } = await services.webhooks.add({
      url: receiver.url,
      formId: form,
      events: 'submission.created',
    })
    const first = await startInstance(ownEnv)
    expect((await postForm(first.url, form, { n: '1' }, { accept: 'application/json' })).status).toBe(201)
    await until(() => receiver.received.length === 1, 10_000, 'the first attempt')
    await first.stop('SIGKILL')
    const second = await startInstance(ownEnv)
    try {
      // The dead server's lease runs out (attempt timeout + 10 s), then the new one sends it.
      await until(() => receiver.received.length === 2, 40_000, 'the second attempt')
    } finally {
      await second.stop()
    }
    const ids = receiver.received.map((r) => r.headers['webhook-id'])
    expect(ids[0]).toMatch(/^evt_/)
    expect(ids[1]).toBe(ids[0])
    const [delivery] = await services.webhooks.deliveries(endpoint.id)
    expect(delivery).toMatchObject({ status: 'delivered', responseCode: 200 })
    await services.webhooks.remove(endpoint.id)
  }, 90_000)

  it.concurrent('two server instances drain one burst together, delivering no event twice', async ({
    expect,
  }) => {
    const receiver = await startReceiver()
    receivers.push(receiver)
    const services = notifyingServices(ctx)
    const form = await openForm(ctx)
    await services.webhooks.add({ url: receiver.url, formId: form, events: 'submission.created' })
    const instances = await Promise.all([startInstance(env()), startInstance(env())])
    try {
      await ctx.services.importer.importRecords({
        submissions: Array.from({ length: 400 }, (_, i) => ({ formId: form, data: { i } })),
      })
      await until(() => receiver.received.length >= 400, 60_000, 'the burst')
      // A little longer: a duplicate would arrive now.
      await new Promise((resolve) => setTimeout(resolve, 1_500))
    } finally {
      await Promise.all(instances.map((instance) => instance.stop()))
    }
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']))
    expect(ids).toHaveLength(400)
    expect(new Set(ids).size).toBe(400)
  }, 90_000)
})
