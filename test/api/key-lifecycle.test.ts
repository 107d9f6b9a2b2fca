import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/errors.js'
import { buildApiKey, buildForm, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request, TIMESTAMP } from '../security-suite.js'

const FORM_ID = 'form_lifecycle'
const SUBMISSIONS = `/api/v1/forms/${FORM_ID}/submissions`

describe('key and user changes take effect on the very next request', () => {
  let ctx: TestContext
  let app: FastifyInstance

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    app = ctx.app
    await buildForm(ctx.database.db, { id: FORM_ID })
    // A standing admin, so that every test may demote, disable or delete the admin it creates.
    await buildUser(ctx.database.db, { role: 'global_admin' })
  })
  afterAll(() => ctx.close())

  const adminWithKey = async () => {
    const user = await buildUser(ctx.database.db, { role: 'global_admin' })
    const key = await buildApiKey(ctx.database.db, { userId: user.id })
    expectList(await request(app, '/api/v1/forms', key.authorization))
    return { user, key }
  }

  it('rejects a revoked key on the very next request', async () => {
    const { key } = await adminWithKey()
    await ctx.services.keys.revokeApiKey(key.id)
    expectError(await request(app, '/api/v1/forms', key.authorization), 401, 'invalid_api_key')
  })

  it('keeps a revoked key rejected even after an attempt to activate it', async () => {
    const { key } = await adminWithKey()
    await ctx.services.keys.revokeApiKey(key.id)
    await expect(ctx.services.keys.activateApiKey(key.id)).rejects.toThrow(ValidationError)
    expectError(await request(app, '/api/v1/forms', key.authorization), 401, 'invalid_api_key')
  })

  it('rejects a deactivated key on the very next request and accepts it again once activated', async () => {
    const { key } = await adminWithKey()
    await ctx.services.keys.deactivateApiKey(key.id)
    expectError(await request(app, '/api/v1/forms', key.authorization), 401, 'api_key_inactive')
    await ctx.services.keys.activateApiKey(key.id)
    expectList(await request(app, '/api/v1/forms', key.authorization))
  })

  it('narrows a key as soon as its creator is demoted, and widens it again on promotion', async () => {
    const { user, key } = await adminWithKey()
    expectList(await request(app, SUBMISSIONS, key.authorization))

    await ctx.services.users.setRole(user.email, 'editor')
    expectError(await request(app, SUBMISSIONS, key.authorization), 403, 'insufficient_permissions')
    expectList(await request(app, '/api/v1/forms', key.authorization))

    await ctx.services.users.setRole(user.email, 'viewer')
    expectError(await request(app, '/api/v1/forms', key.authorization), 403, 'insufficient_permissions')
    expectList(await request(app, '/api/v1/page-builder', key.authorization))
    expectList(await request(app, '/api/v1/page-builder/redirects', key.authorization))

    await ctx.services.users.setRole(user.email, 'global_admin')
    expectList(await request(app, SUBMISSIONS, key.authorization))
  })

  it('rejects the keys of a disabled user on the very next request and accepts them once re-enabled', async () => {
    const { user, key } = await adminWithKey()
    const second = await buildApiKey(ctx.database.db, { userId: user.id })
    await ctx.services.users.disableUser(user.email)
    expectError(await request(app, '/api/v1/forms', key.authorization), 401, 'api_key_inactive')
    expectError(await request(app, '/api/v1/forms', second.authorization), 401, 'api_key_inactive')
    await ctx.services.users.enableUser(user.email)
    expectList(await request(app, '/api/v1/forms', key.authorization))
    expectList(await request(app, '/api/v1/forms', second.authorization))
  })

  it('rejects the key of a deleted user on the very next request', async () => {
    const { user, key } = await adminWithKey()
    await ctx.services.users.deleteUser(user.email)
    expectError(await request(app, '/api/v1/forms', key.authorization), 401, 'invalid_api_key')
  })

  it('leaves the other keys of the same user working when one is revoked', async () => {
    const { user, key } = await adminWithKey()
    const other = await buildApiKey(ctx.database.db, { userId: user.id })
    await ctx.services.keys.revokeApiKey(key.id)
    expectList(await request(app, '/api/v1/forms', other.authorization))
  })

  it('accepts a key created through the keys service at once, and stores only its hash', async () => {
    const user = await buildUser(ctx.database.db, { role: 'global_admin' })
    const { key, plainKey } = await ctx.services.keys.createApiKey({ name: 'ci', userEmail: user.email })
    expect(plainKey).toMatch(/^lk_live_[0-9A-Za-z]{32,}$/)
    expectList(await request(app, '/api/v1/forms', `Bearer ${plainKey}`))

    const row = await ctx.database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow()
    for (const value of Object.values(row)) expect(String(value)).not.toContain(plainKey)
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(plainKey.startsWith(row.prefix)).toBe(true)
    expect(row.prefix.length).toBeLessThan(plainKey.length / 2)
  })

  describe('lastUsedAt', () => {
    const lastUsedAt = async (id: string) =>
      (
        await ctx.database.db
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).last_used_at

    it('is set by the first request made with the key', async () => {
      const key = await buildApiKey(ctx.database.db)
      expect(await lastUsedAt(key.id)).toBeNull()
      const before = Date.now()
      expectList(await request(app, '/api/v1/forms', key.authorization))
      const used = await lastUsedAt(key.id)
      expect(used).toMatch(TIMESTAMP)
      expect(Date.parse(used as string)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
      expect(Date.parse(used as string)).toBeLessThanOrEqual(Date.now())
    })

    it('is not rewritten by every request within a minute', async () => {
      const key = await buildApiKey(ctx.database.db)
      const recent = new Date(Date.now() - 30_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
      await sql`UPDATE api_keys SET last_used_at = ${recent} WHERE id = ${key.id}`.execute(ctx.database.db)
      for (let i = 0; i < 3; i++) expectList(await request(app, '/api/v1/forms', key.authorization))
      expect(await lastUsedAt(key.id)).toBe(recent)
    })

    it('is moved forward once it is more than a minute old', async () => {
      const key = await buildApiKey(ctx.database.db)
      const stale = new Date(Date.now() - 120_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
      await sql`UPDATE api_keys SET last_used_at = ${stale} WHERE id = ${key.id}`.execute(ctx.database.db)
      expectList(await request(app, '/api/v1/forms', key.authorization))
      const used = await lastUsedAt(key.id)
      expect(used).toMatch(TIMESTAMP)
      expect(Date.parse(used as string)).toBeGreaterThan(Date.parse(stale) + 60_000)
    })

    it('is not touched by a request with a revoked or deactivated key', async () => {
      const revoked = await buildApiKey(ctx.database.db, { revoked: true })
      const inactive = await buildApiKey(ctx.database.db, { active: false })
      await request(app, '/api/v1/forms', revoked.authorization)
      await request(app, '/api/v1/forms', inactive.authorization)
      expect(await lastUsedAt(revoked.id)).toBeNull()
      expect(await lastUsedAt(inactive.id)).toBeNull()
    })
  })
})
