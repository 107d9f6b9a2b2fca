import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUsageService } from '../../src/services/usage.js'
import { buildApiKey } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { signedInClient, textOf } from './support.js'

describe('API key usage', () => {
  let ctx: TestContext

  const usageRows = (keyId: string) =>
    ctx.database.db.selectFrom('key_usage_hourly').selectAll().where('key_id', '=', keyId).execute()
  const call = (authorization: string) =>
    ctx.app.inject({ method: 'GET', url: '/api/v1/page-builder', headers: { authorization } })

  beforeAll(async () => {
    // A burst limit low enough to see 429s, an hourly one high enough not to matter.
    ctx = await createTestContext({ perHour: 100_000, perSecond: 3 })
  })
  afterAll(() => ctx.close())

  it('counts requests in memory and writes them only when flushed, 429s as rejected', async () => {
    const key = await buildApiKey(ctx.database.db)
    const statuses = await Promise.all(Array.from({ length: 5 }, () => call(key.authorization)))
    const refused = statuses.filter((res) => res.statusCode === 429).length
    expect(refused).toBeGreaterThanOrEqual(2)
    // Serving requests wrote nothing.
    expect(await usageRows(key.id)).toEqual([])

    await ctx.services.usage.flush()
    const rows = await usageRows(key.id)
    expect(rows).toHaveLength(1)
    expect(Number(rows[0]?.requests)).toBe(5)
    expect(Number(rows[0]?.rejected)).toBe(refused)
    expect(rows[0]?.hour).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/)
  })

  it('adds the counts of several instances and several flushes to the same hour', async () => {
    const key = await buildApiKey(ctx.database.db)
    const other = createUsageService(ctx.database.db)
    ctx.services.usage.count(key.id, false)
    other.count(key.id, false)
    other.count(key.id, true)
    await Promise.all([ctx.services.usage.flush(), other.flush()])
    ctx.services.usage.count(key.id, false)
    await ctx.services.usage.flush()
    const [row] = await usageRows(key.id)
    expect([Number(row?.requests), Number(row?.rejected)]).toEqual([4, 1])
  })

  it('reports seven days of hours, oldest first, with gaps as zeros and unflushed counts included', async () => {
    const key = await buildApiKey(ctx.database.db)
    const hourMs = 3_600_000
    const start = Math.floor(Date.parse('2024-03-10T15:30:00Z') / hourMs) * hourMs
    let now = start
    const usage = createUsageService(ctx.database.db, { clock: () => now })
    usage.count(key.id, false)
    await usage.flush()
    now += 2 * hourMs
    usage.count(key.id, true)
    const hours = await usage.hourly(key.id)
    expect(hours).toHaveLength(168)
    expect(hours.at(-1)).toEqual({ hour: '2024-03-10T17:00:00Z', requests: 1, rejected: 1 })
    expect(hours.at(-2)).toEqual({ hour: '2024-03-10T16:00:00Z', requests: 0, rejected: 0 })
    expect(hours.at(-3)).toEqual({ hour: '2024-03-10T15:00:00Z', requests: 1, rejected: 0 })
    expect(hours[0]?.hour).toBe('2024-03-03T18:00:00Z')
  })

  it('draws the chart on the key’s page and the day’s totals on the overview, for global admins', async () => {
    const key = await buildApiKey(ctx.database.db)
    for (let i = 0; i < 3; i++) ctx.services.usage.count(key.id, i === 2)
    await ctx.services.usage.flush()
    const { client } = await signedInClient(ctx.app, ctx.database.db)
    const page = await client.get(`/admin/keys/${key.id}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<svg class="usage-chart"')
    expect(page.body).toMatch(/<rect class="usage-rejected"/)
    expect(textOf(page)).toContain('3 requests in the last 7 days, 1 rejected for the rate limit (429)')
    expect(page.body).not.toMatch(/<script(?! src="\/admin\/static\/admin.js")/)

    const overview = textOf(await client.get('/admin'))
    expect(overview).toMatch(/[0-9,]+ requests today, [0-9,]+ rejected \(429\)/)

    const { client: editor } = await signedInClient(ctx.app, ctx.database.db, 'editor')
    expect((await editor.get(`/admin/keys/${key.id}`)).statusCode).toBe(403)
    expect(textOf(await editor.get('/admin'))).not.toContain('requests today')
  })

  it('reports a flush the database refuses and drops it, rather than retrying it forever', async () => {
    const key = await buildApiKey(ctx.database.db)
    const errors: unknown[] = []
    const usage = createUsageService(ctx.database.db, { onFlushError: (error) => errors.push(error) })
    usage.count(key.id, false)
    // Keys are never deleted (revoked ones stay), so only a bug could name a missing one.
    usage.count('key_that_does_not_exist', false)
    await usage.flush()
    expect(errors).toHaveLength(1)
    expect(await usageRows(key.id)).toEqual([])
  })
})
