import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { signedInClient, textOf } from './support.js'

describe('the overview', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  it('shows a global admin the latest changes, newest first, linking to the whole audit log', async () => {
    const { client, user } = await signedInClient(ctx.app, ctx.database.db)
    const first = await ctx.services.keys.createApiKey({ name: 'Overview first', userEmail: user.email })
    await ctx.services.keys.revokeApiKey(first.key.id, { email: user.email })
    const res = await client.get('/admin')
    expect(res.statusCode).toBe(200)
    const recent = res.body.slice(res.body.indexOf('id="recent-activity"'))
    expect(recent).toContain('href="/admin/audit"')
    const revoked = recent.indexOf('key.revoked')
    const created = recent.indexOf('key.created')
    expect(revoked).toBeGreaterThan(-1)
    expect(created).toBeGreaterThan(revoked)
    expect(textOf({ body: recent })).toContain(user.email)
  })

  it('does not count an expired key among the active ones', async () => {
    const { client, user } = await signedInClient(ctx.app, ctx.database.db)
    const card = async () => {
      const text = textOf(await client.get('/admin'))
      return Number(/API keys (\d+) active/.exec(text)?.[1])
    }
    const before = await card()
    const { key } = await ctx.services.keys.createApiKey({ name: 'Soon expired', userEmail: user.email })
    expect(await card()).toBe(before + 1)
    await ctx.database.db
      .updateTable('api_keys')
      .set({ expires_at: '2020-01-01T00:00:00Z' })
      .where('id', '=', key.id)
      .execute()
    expect(await card()).toBe(before)
  })

  it('shows no activity to an editor, who may not read the audit log', async () => {
    const { client } = await signedInClient(ctx.app, ctx.database.db, 'editor')
    const res = await client.get('/admin')
    expect(res.statusCode).toBe(200)
    expect(res.body).not.toContain('recent-activity')
    expect(res.body).not.toContain('/admin/audit')
  })

  it('gives every time its UTC value on hover and in machine-readable form, for the script to localise', async () => {
    const { client } = await signedInClient(ctx.app, ctx.database.db)
    const res = await client.get('/admin')
    expect(res.body).toMatch(
      /<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">/,
    )
  })
})
