import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

describe('an API-only instance (ADMIN_DASHBOARD=off, API_REFERENCE=off)', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestContext({ surfaces: { ADMIN_DASHBOARD: 'off', API_REFERENCE: 'off' } })
  })
  afterAll(() => ctx.close())

  it('serves neither the dashboard nor the reference page, with the JSON 404 envelope', async () => {
    for (const url of ['/admin', '/admin/login', '/docs']) {
      const res = await ctx.app.inject({ url })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toEqual({ error: 'resource_not_found', message: expect.any(String) })
    }
  })

  it('still serves the API and its OpenAPI document', async () => {
    const key = await buildApiKey(ctx.database.db)
    expect(
      (await ctx.app.inject({ url: '/api/v1/forms', headers: { authorization: key.authorization } }))
        .statusCode,
    ).toBe(200)
    expect((await ctx.app.inject({ url: '/openapi.json' })).json().openapi).toMatch(/^3\.1/)
  })
})
