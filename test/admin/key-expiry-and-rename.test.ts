import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatTimestamp } from '../../src/time.js'
import { buildApiKey, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { type DashboardClient, rowText, signedInClient, textOf } from './support.js'

const inOneYear = () => formatTimestamp(new Date(Date.now() + 365 * 86_400_000))

describe('API keys: expiry and renaming', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let admin: DashboardClient
  let adminEmail: string

  const api = (key: string) =>
    app.inject({ method: 'GET', url: '/api/v1/page-builder', headers: { authorization: `Bearer ${key}` } })
  const expiredEntries = async (keyId: string) =>
    (await ctx.services.audit.list({ action: 'key.expired' }, { page: 1, pageSize: 100 })).items.filter(
      (entry) => entry.target === keyId,
    )

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    const signed = await signedInClient(app, ctx.database.db)
    admin = signed.client
    adminEmail = signed.user.email
  })
  afterAll(() => ctx.close())

  it('answers an expired key 401 api_key_inactive saying it has expired, and audits the first use only', async () => {
    const user = await buildUser(ctx.database.db, { role: 'global_admin' })
    const { id, plainKey } = await buildApiKey(ctx.database.db, { userId: user.id })
    expect((await api(plainKey)).statusCode).toBe(200)
    const past = '2020-01-01T00:00:00Z'
    await ctx.database.db.updateTable('api_keys').set({ expires_at: past }).where('id', '=', id).execute()

    for (let i = 0; i < 3; i++) {
      const res = await api(plainKey)
      expect(res.statusCode).toBe(401)
      expect(res.json()).toEqual({
        error: 'api_key_inactive',
        message: `The provided API key has expired (at ${past})`,
      })
      expect(res.headers['www-authenticate']).toContain('Bearer')
      expect(res.headers['x-ratelimit-limit']).toBeUndefined()
    }
    const entries = await expiredEntries(id)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({ actor: 'system', action: 'key.expired', target: id })
  })

  it('keeps a key working until its expiry, with its creator’s permissions', async () => {
    const editor = await buildUser(ctx.database.db, { role: 'editor' })
    const { id, plainKey } = await buildApiKey(ctx.database.db, { userId: editor.id })
    await ctx.database.db
      .updateTable('api_keys')
      .set({ expires_at: inOneYear() })
      .where('id', '=', id)
      .execute()
    expect((await api(plainKey)).statusCode).toBe(200)
    const submissions = await app.inject({
      method: 'GET',
      url: '/api/v1/forms/form_x/submissions',
      headers: { authorization: `Bearer ${plainKey}` },
    })
    expect(submissions.statusCode).toBe(403)
    expect(await expiredEntries(id)).toHaveLength(0)
  })

  it('creates a key with an expiry date from the dashboard, and lists when it expires', async () => {
    await admin.get('/admin/keys/new')
    expect((await admin.get('/admin/keys/new')).body).toContain('type="date"')
    const res = await admin.post('/admin/keys', { name: 'Expiring key', expires: '2099-12-31' })
    expect(res.statusCode).toBe(303)
    const key = (await ctx.services.keys.listApiKeys()).find((k) => k.name === 'Expiring key')
    expect(key?.expiresAt).toBe('2099-12-31T00:00:00Z')
    const created = (await ctx.services.audit.list({ action: 'key.created' }, { page: 1, pageSize: 5 }))
      .items[0]
    expect(created).toMatchObject({ actor: adminEmail, detail: { expiresAt: '2099-12-31T00:00:00Z' } })
    const list = await admin.get('/admin/keys')
    expect(textOf(list)).toContain('2099-12-31')
  })

  it('refuses an expiry in the past or one that is not a date, keeping what was typed', async () => {
    const before = (await ctx.services.keys.listApiKeys()).length
    for (const [expires, message] of [
      ['2001-01-01', 'is in the past'],
      ['tomorrow', 'is not an ISO 8601 date-time'],
    ]) {
      await admin.get('/admin/keys/new')
      const res = await admin.post('/admin/keys', { name: 'Refused', expires })
      expect(res.statusCode, expires).toBe(422)
      expect(textOf(res)).toContain(message)
      expect(res.body).toContain(`value="${expires}"`)
      // Beside the expiry field, which is marked invalid; the name is not.
      expect(res.body).toMatch(
        new RegExp(`<p class="field-problem" id="field-expires-problem">[^<]*${message}`),
      )
      expect(res.body).toMatch(/<input id="field-expires" name="expires" type="date"[^>]*aria-invalid="true"/)
      expect(res.body).not.toContain('id="field-name-problem"')
    }
    expect(await ctx.services.keys.listApiKeys()).toHaveLength(before)
  })

  it('shows an expired key as expired in the list and on its page', async () => {
    const user = await buildUser(ctx.database.db, { role: 'global_admin' })
    const { id } = await buildApiKey(ctx.database.db, { userId: user.id, name: 'Old key' })
    await ctx.database.db
      .updateTable('api_keys')
      .set({ expires_at: '2021-06-01T00:00:00Z' })
      .where('id', '=', id)
      .execute()
    const page = await admin.get(`/admin/keys/${id}`)
    expect(page.statusCode).toBe(200)
    expect(textOf(page)).toContain('Expired')
    expect(textOf(page)).toContain('2021-06-01')
  })

  it('shows a disabled owner’s key as inactive, saying why, in the list, its filter, its page and the users list', async () => {
    const owner = await buildUser(ctx.database.db, { role: 'global_admin' })
    const { id, plainKey } = await buildApiKey(ctx.database.db, { userId: owner.id, name: 'Orphaned site' })
    await ctx.services.users.disableUser(owner.email)
    expect((await api(plainKey)).json()).toMatchObject({ error: 'api_key_inactive' })

    const list = await admin.get('/admin/keys')
    const row = rowText(list, `key-${id}`)
    expect(row).toContain('Inactive owner disabled')
    expect(row).not.toContain('Active')
    // Its own switch is still on: the row offers to deactivate it, not to activate it.
    expect(row).toContain('Deactivate')
    const inactive = await admin.get('/admin/keys?filter=inactive')
    expect(textOf(inactive)).toContain('Orphaned site')
    expect(textOf(await admin.get('/admin/keys?filter=active'))).not.toContain('Orphaned site')
    expect(textOf(await admin.get(`/admin/keys/${id}`))).toContain('Inactive owner disabled')
    expect(rowText(await admin.get('/admin/users'), `user-${owner.id}`)).toContain('0 active of 1')
  })

  it('renames a key from its page, audited, and the key keeps working', async () => {
    const user = await buildUser(ctx.database.db, { role: 'global_admin' })
    const { id, plainKey } = await buildApiKey(ctx.database.db, { userId: user.id, name: 'Before' })
    await admin.get(`/admin/keys/${id}`)
    const res = await admin.post(`/admin/keys/${id}/rename`, { name: '  After  ' })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/admin/keys/${id}`)
    expect((await ctx.services.keys.findApiKey(id)).name).toBe('After')
    expect(textOf(await admin.get(`/admin/keys/${id}`))).toContain('is now called “After”')
    const [entry] = (await ctx.services.audit.list({ action: 'key.renamed' }, { page: 1, pageSize: 5 })).items
    expect(entry).toMatchObject({ actor: adminEmail, target: id, detail: { from: 'Before', to: 'After' } })
    expect((await api(plainKey)).statusCode).toBe(200)
  })

  it('refuses an empty name, writing nothing, and refuses renames without the CSRF token or by other roles', async () => {
    const user = await buildUser(ctx.database.db, { role: 'global_admin' })
    const { id } = await buildApiKey(ctx.database.db, { userId: user.id, name: 'Stays' })
    const renames = async () =>
      (await ctx.services.audit.list({ action: 'key.renamed' }, { page: 1, pageSize: 100 })).items.length
    const before = await renames()
    await admin.get(`/admin/keys/${id}`)
    const empty = await admin.post(`/admin/keys/${id}/rename`, { name: '   ' })
    expect(empty.statusCode).toBe(422)
    expect(textOf(empty)).toContain('Key name must be 1 to 100 characters')

    const forged = await admin.post(`/admin/keys/${id}/rename`, { name: 'Forged', _csrf: 'wrong' })
    expect(forged.statusCode).toBe(403)

    for (const role of ['editor', 'viewer'] as const) {
      const { client } = await signedInClient(app, ctx.database.db, role)
      expect((await client.get(`/admin/keys/${id}`)).statusCode).toBe(403)
      expect((await client.post(`/admin/keys/${id}/rename`, { name: 'By ' + role })).statusCode).toBe(403)
    }
    expect((await ctx.services.keys.findApiKey(id)).name).toBe('Stays')
    expect(await renames()).toBe(before)
    expect((await admin.get('/admin/keys/key_unknown')).statusCode).toBe(404)
  })
})
