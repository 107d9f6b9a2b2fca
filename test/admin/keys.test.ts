import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request } from '../security-suite.js'
import { type DashboardClient, rowText, signedInClient, textOf } from './support.js'

const KEY_IN_PAGE = /value="(lk_live_[0-9A-Za-z]+)"/

describe('Organization → API keys', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let admin: DashboardClient
  let adminEmail: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    const signedIn = await signedInClient(app, ctx.database.db)
    admin = signedIn.client
    adminEmail = signedIn.user.email
  })
  afterAll(() => ctx.close())

  const createKey = async (name: string) => {
    await admin.get('/admin/keys/new')
    const created = await admin.post('/admin/keys', { name })
    expect(created.statusCode).toBe(303)
    expect(created.headers.location).toBe('/admin/keys/created')
    const res = await admin.get('/admin/keys/created')
    const plainKey = KEY_IN_PAGE.exec(res.body)?.[1] as string
    const key = (await ctx.services.keys.listApiKeys()).find((k) => k.name === name)
    if (!key) throw new Error(`no key named ${name}`)
    return { res, plainKey, key }
  }

  it('explains an empty list and offers to create the first key', async () => {
    const res = await admin.get('/admin/keys')
    expect(res.statusCode).toBe(200)
    expect(textOf(res)).toContain('No API keys yet')
    expect(res.body).toContain('href="/admin/keys/new"')
  })

  it('shows a new key exactly once, with a warning and a copy button, never cached', async () => {
    const { res, plainKey, key } = await createKey('Marketing website')
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(plainKey).toMatch(/^lk_live_[0-9A-Za-z]{40}$/)
    expect(textOf(res)).toContain('Copy this key now: it is shown only once')
    expect(res.body).toMatch(/<button type="button"[^>]*data-copy-target="new-key"/)
    expect(key).toMatchObject({ status: 'active', createdBy: adminEmail, prefix: plainKey.slice(0, 12) })

    const list = await admin.get('/admin/keys')
    expect(list.body).not.toContain(plainKey)
    const text = textOf(list)
    expect(text).toContain('Marketing website')
    expect(text).toContain(`${key.prefix}…`)
    expect(text).toContain(adminEmail)
    expect(text).toContain('Never')
    expect(text).toContain('Active')
  })

  it('creates no second key when the page showing the new one is reloaded, and shows the key no more', async () => {
    const before = (await ctx.services.keys.listApiKeys()).length
    const { plainKey } = await createKey('Reloaded')
    const reloaded = await admin.get('/admin/keys/created')
    expect(reloaded.statusCode).toBe(303)
    expect(reloaded.headers.location).toBe('/admin/keys')
    const list = await admin.get('/admin/keys')
    expect(list.body).not.toContain(plainKey)
    expect(textOf(list)).toContain('A new key is shown only once')
    expect((await ctx.services.keys.listApiKeys()).length).toBe(before + 1)
    // The cookie that carried it is useless to another session.
    const sealed = admin.cookies.get('lectern_new_key')
    expect(sealed).toBeUndefined()
  })

  it('creates a key that the API accepts at once, and shows when it was last used', async () => {
    const { plainKey, key } = await createKey('Used at once')
    expectList(await request(app, '/api/v1/forms', `Bearer ${plainKey}`))
    expect((await ctx.services.keys.listApiKeys()).find((k) => k.id === key.id)?.lastUsedAt).not.toBeNull()
    expect(rowText(await admin.get('/admin/keys'), `key-${key.id}`)).not.toContain('Never')
  })

  it('refuses a key without a name, saying why', async () => {
    await admin.get('/admin/keys/new')
    const res = await admin.post('/admin/keys', { name: '   ' })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain('Key name must be 1 to 100 characters')
    // Beside the name field too, which is marked invalid.
    expect(res.body).toContain(
      '<p class="field-problem" id="field-name-problem">Key name must be 1 to 100 characters</p>',
    )
    expect(res.body).toMatch(/<input id="field-name" name="name"[^>]*aria-invalid="true"/)
  })

  it('deactivates and reactivates a key, and the API follows on the next request', async () => {
    const { plainKey, key } = await createKey('Switchable')
    await admin.get('/admin/keys')
    const off = await admin.post(`/admin/keys/${key.id}/deactivate`)
    expect(off.statusCode).toBe(303)
    expect(off.headers.location).toBe('/admin/keys')
    expect(textOf(await admin.get('/admin/keys'))).toContain('Key “Switchable” deactivated')
    expectError(await request(app, '/api/v1/forms', `Bearer ${plainKey}`), 401, 'api_key_inactive')

    await admin.post(`/admin/keys/${key.id}/activate`)
    expectList(await request(app, '/api/v1/forms', `Bearer ${plainKey}`))
  })

  it('asks before revoking, then revokes for good and keeps the key listed as revoked', async () => {
    const { plainKey, key } = await createKey('Old integration')
    const confirm = await admin.get(`/admin/keys/${key.id}/revoke`)
    expect(confirm.statusCode).toBe(200)
    expect(textOf(confirm)).toContain('Revoke the API key “Old integration”?')
    expect(textOf(confirm)).toContain('cannot be activated again')
    // Opening the confirmation changes nothing.
    expectList(await request(app, '/api/v1/forms', `Bearer ${plainKey}`))

    const res = await admin.post(`/admin/keys/${key.id}/revoke`)
    expect(res.statusCode).toBe(303)
    expectError(await request(app, '/api/v1/forms', `Bearer ${plainKey}`), 401, 'invalid_api_key')
    const list = await admin.get('/admin/keys')
    expect(textOf(list)).toContain('Key “Old integration” revoked')
    expect(rowText(list, `key-${key.id}`)).toContain('Revoked')
    expect(rowText(list, `key-${key.id}`)).not.toMatch(/Activate|Deactivate|Revoke…/)

    const again = await admin.post(`/admin/keys/${key.id}/activate`)
    expect(again.statusCode).toBe(303)
    expect(textOf(await admin.get('/admin/keys'))).toContain('a revoked key cannot be activated')
    expectError(await request(app, '/api/v1/forms', `Bearer ${plainKey}`), 401, 'invalid_api_key')
  })

  it('lists the keys of a deleted user as revoked and created by a deleted user', async () => {
    const gone = await buildUser(ctx.database.db, { role: 'global_admin' })
    const key = await buildApiKey(ctx.database.db, { userId: gone.id, name: 'Orphaned' })
    await ctx.services.users.deleteUser(gone.email)
    const list = await admin.get('/admin/keys')
    const text = rowText(list, `key-${key.id}`)
    expect(text).toContain('Deleted user')
    expect(text).toContain('Revoked')
  })

  it('offers a signed-in user the way back to the overview from an address no page answers, and a signed-out one the sign-in', async () => {
    const missing = await admin.get('/admin/no-such-page')
    expect(missing.statusCode).toBe(404)
    expect(textOf(missing)).toContain('Page not found')
    expect(missing.body).toContain('<a class="button secondary" href="/admin">Go to the overview</a>')
    expect(missing.body).not.toContain('Go to sign-in')
    expect(missing.body).toContain('href="/admin/account"')
    const stranger = await app.inject({ method: 'GET', url: '/admin/no-such-page' })
    expect(stranger.statusCode).toBe(404)
    expect(stranger.body).toContain('Go to sign-in')
  })

  it('answers 404 with a page for a key that does not exist', async () => {
    await admin.get('/admin/keys')
    const res = await admin.post('/admin/keys/key_nope/revoke')
    expect(res.statusCode).toBe(404)
    expect(textOf(res)).toContain("API key 'key_nope' not found")
  })
})
