import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DashboardClient, PASSWORD, signedInClient, textOf } from '../admin/support.js'
import { buildForm, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

describe('the audit log', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let admin: DashboardClient
  let adminEmail: string

  /** The entries of `action` about `target`, newest first. */
  const entries = async (action: string, target?: string) =>
    (await ctx.services.audit.list({ action }, { page: 1, pageSize: 100 })).items.filter(
      (entry) => target === undefined || entry.target === target,
    )

  beforeAll(async () => {
    ctx = await createTestContext()
    app = ctx.app
    const signed = await signedInClient(app, ctx.database.db)
    admin = signed.client
    adminEmail = signed.user.email
  })
  afterAll(() => ctx.close())

  it('records dashboard changes to keys with the signed-in user as the actor', async () => {
    await admin.get('/admin/keys/new')
    expect((await admin.post('/admin/keys', { name: 'Audited key' })).statusCode).toBe(303)
    const key = (await ctx.services.keys.listApiKeys()).find((k) => k.name === 'Audited key')
    if (!key) throw new Error('the key was not created')
    await admin.get('/admin/keys')
    expect((await admin.post(`/admin/keys/${key.id}/deactivate`)).statusCode).toBe(303)
    await admin.get('/admin/keys')
    expect((await admin.post(`/admin/keys/${key.id}/revoke`)).statusCode).toBe(303)

    for (const action of ['key.created', 'key.deactivated', 'key.revoked']) {
      const [entry] = await entries(action, key.id)
      expect(entry, action).toMatchObject({ actor: adminEmail, action, target: key.id })
      expect(entry?.detail).toMatchObject({ name: 'Audited key' })
    }
    const created = (await entries('key.created', key.id))[0]
    // The plain key and its hash are never in the log.
    const stored = await ctx.database.db
      .selectFrom('api_keys')
      .select('key_hash')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(created)).not.toContain(stored.key_hash)
    expect(JSON.stringify(created)).not.toMatch(/lk_live_[0-9A-Za-z]{32}/)
  })

  it('writes nothing for a refused key change: a revoked key cannot be deactivated', async () => {
    const { key } = await ctx.services.keys.createApiKey({ name: 'Revoked early' })
    await ctx.services.keys.revokeApiKey(key.id)
    await admin.get('/admin/keys')
    const res = await admin.post(`/admin/keys/${key.id}/deactivate`)
    expect(res.statusCode).toBe(303)
    expect(textOf(await admin.get('/admin/keys'))).toContain('a revoked key cannot be deactivated')
    expect(await entries('key.deactivated', key.id)).toEqual([])
    // Revoking again changes nothing, so it is not recorded twice.
    await ctx.services.keys.revokeApiKey(key.id)
    expect(await entries('key.revoked', key.id)).toHaveLength(1)
  })

  it('records user changes, and refused changes leave no entry', async () => {
    await admin.get('/admin/users/new')
    const email = 'audited-editor@example.com'
    expect((await admin.post('/admin/users', { email, role: 'editor', password: '' })).statusCode).toBe(201)
    const user = await ctx.services.users.findUser(email)
    await admin.get('/admin/users')
    await admin.post(`/admin/users/${user.id}/role`, { role: 'viewer' })
    await admin.post(`/admin/users/${user.id}/disable`)
    await admin.post(`/admin/users/${user.id}/enable`)
    await admin.post(`/admin/users/${user.id}/delete`)
    expect((await entries('user.created', email))[0]).toMatchObject({
      actor: adminEmail,
      detail: { role: 'editor' },
    })
    expect((await entries('user.role_changed', email))[0]).toMatchObject({
      actor: adminEmail,
      detail: { from: 'editor', to: 'viewer' },
    })
    for (const action of ['user.disabled', 'user.enabled', 'user.deleted'])
      expect(await entries(action, email), action).toHaveLength(1)

    // The last enabled global admin cannot be demoted: the refusal writes nothing.
    const me = await ctx.services.users.findUser(adminEmail)
    const before = (await entries('user.role_changed')).length
    await admin.get('/admin/users')
    expect((await admin.post(`/admin/users/${me.id}/role`, { role: 'editor' })).statusCode).toBe(303)
    expect((await ctx.services.users.findUser(adminEmail)).role).toBe('global_admin')
    expect(await entries('user.role_changed')).toHaveLength(before)
  })

  it('writes the entry in the change’s transaction: when the entry cannot be written, the change is undone', async () => {
    const refuse =
      ctx.dialect === 'sqlite'
        ? [
            `create trigger refuse_user_audit before insert on audit_log when new.action = 'user.created' begin select raise(abort, 'audit refused'); end`,
          ]
        : [
            `create function refuse_user_audit() returns trigger language plpgsql as $$ begin raise exception 'audit refused'; end $$`,
            `create trigger refuse_user_audit before insert on audit_log for each row when (new.action = 'user.created') execute function refuse_user_audit()`,
          ]
    for (const statement of refuse) await sql.raw(statement).execute(ctx.database.db)
    try {
      await admin.get('/admin/users/new')
      const res = await admin.post('/admin/users', {
        email: 'never-created@example.com',
        role: 'viewer',
        password: '',
      })
      expect(res.statusCode).toBe(500)
      await expect(ctx.services.users.findUser('never-created@example.com')).rejects.toThrow(/not found/)
    } finally {
      await sql
        .raw('drop trigger refuse_user_audit' + (ctx.dialect === 'postgres' ? ' on audit_log' : ''))
        .execute(ctx.database.db)
      if (ctx.dialect === 'postgres')
        await sql.raw('drop function refuse_user_audit()').execute(ctx.database.db)
    }
  })

  it('records sign-ins and failed sign-ins by email, never the password', async () => {
    const user = await buildUser(ctx.database.db, { email: 'signer@example.com', role: 'viewer' })
    const failed = new DashboardClient(app)
    const wrong = 'not-the-password-at-all'
    await failed.signIn(user.email, wrong)
    const [failure] = await entries('session.sign_in_failed', user.email)
    expect(failure).toMatchObject({ actor: user.email, target: user.email, detail: { reason: 'invalid' } })
    expect(JSON.stringify(failure)).not.toContain(wrong)

    const client = new DashboardClient(app)
    expect((await client.signIn(adminEmail, PASSWORD)).statusCode).toBe(303)
    expect((await entries('session.signed_in', adminEmail)).length).toBeGreaterThanOrEqual(2)
    const log = await ctx.database.db.selectFrom('audit_log').select('detail').execute()
    expect(JSON.stringify(log)).not.toContain(PASSWORD)
  })

  it('records content changes, redirect changes and imports', async () => {
    const form = await buildForm(ctx.database.db, { id: 'form_audited' })
    await admin.get('/admin/forms')
    await admin.post(`/admin/forms/${form.id}/active`, { active: 'false' })
    expect((await entries('form.updated', form.id))[0]).toMatchObject({
      actor: adminEmail,
      detail: { isActive: false },
    })

    const change = await ctx.services.redirects.createRedirect(
      { fromPath: '/audited', toPath: '/elsewhere', type: 'permanent', isActive: true },
      { email: adminEmail },
    )
    await ctx.services.redirects.deleteRedirect(change.redirect.id)
    expect((await entries('redirect.created', change.redirect.id))[0]).toMatchObject({
      actor: adminEmail,
      detail: { fromPath: '/audited', toPath: '/elsewhere' },
    })
    expect((await entries('redirect.deleted', change.redirect.id))[0]).toMatchObject({ actor: 'cli' })

    // A refused redirect (a loop) writes nothing.
    const before = (await entries('redirect.created')).length
    await ctx.services.redirects.createRedirect({ fromPath: '/loop-a', toPath: '/loop-b' })
    await expect(
      ctx.services.redirects.createRedirect({ fromPath: '/loop-b', toPath: '/loop-a' }),
    ).rejects.toThrow(/loop/)
    expect(await entries('redirect.created')).toHaveLength(before + 1)

    await ctx.services.importer.importRecords({ forms: [{ id: 'form_imported', title: 'Imported' }] })
    expect((await entries('content.imported'))[0]).toMatchObject({
      actor: 'cli',
      detail: { counts: { forms: 1 }, created: { forms: 1 } },
    })
    // A refused import writes nothing, its entry included.
    const imports = (await entries('content.imported')).length
    await expect(ctx.services.importer.importRecords({ forms: [{ id: 'form_bad' }] })).rejects.toThrow()
    expect(await entries('content.imported')).toHaveLength(imports)
  })

  it('shows the log to global admins only, newest first, filtered by action and searched by actor, in pages', async () => {
    for (let i = 0; i < 25; i++)
      await ctx.services.redirects.createRedirect({ fromPath: `/paged-${i}`, toPath: '/target' })
    const page = await admin.get('/admin/audit?q=cli&filter=redirect.created')
    expect(page.statusCode).toBe(200)
    const text = textOf(page)
    expect(text).toContain('Audit log')
    expect(text).toMatch(/2[6-9] entries match/)
    // Newest first: /paged-24 before /paged-23.
    expect(text.indexOf('/paged-24')).toBeGreaterThan(-1)
    expect(text.indexOf('/paged-24')).toBeLessThan(text.indexOf('/paged-23'))
    expect(page.body).not.toContain('<code>key.created</code>')
    expect(page.body).toContain('href="/admin/audit?q=cli&amp;filter=redirect.created&amp;page=2"')

    const second = await admin.get('/admin/audit?q=cli&filter=redirect.created&page=2')
    expect(textOf(second)).toContain('/paged-0')
    const past = await admin.get('/admin/audit?q=cli&filter=redirect.created&page=9')
    expect(past.statusCode).toBe(303)

    const mine = await admin.get(`/admin/audit?q=${encodeURIComponent(adminEmail)}`)
    expect(mine.body).toContain('<code>key.created</code>')
    expect(textOf(mine)).not.toContain('/paged-')

    for (const role of ['editor', 'viewer'] as const) {
      const { client } = await signedInClient(app, ctx.database.db, role)
      expect((await client.get('/admin/audit')).statusCode, role).toBe(403)
      expect((await client.get('/admin')).body).not.toContain('/admin/audit')
    }
    const signedOut = await new DashboardClient(app).get('/admin/audit')
    expect(signedOut.statusCode).toBe(303)
    expect(signedOut.headers.location).toContain('/admin/login')
  })

  it('escapes what the log holds', async () => {
    await ctx.services.redirects.createRedirect({ fromPath: '/<script>x</script>', toPath: '/safe' })
    const page = await admin.get('/admin/audit?filter=redirect.created')
    expect(page.body).not.toContain('<script>x</script>')
    expect(page.body).toContain('&lt;script&gt;')
  })
})
