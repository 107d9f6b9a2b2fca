import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

describe('smoke', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  it('lists forms', async () => {
    const key = await buildApiKey(ctx.database.db)
    await buildForm(ctx.database.db, { title: 'A', description: 'd' })
    const res = await ctx.app.inject({ url: '/api/v1/forms', headers: { authorization: key.authorization } })
    console.log(res.statusCode, res.headers, res.body)
    const post = await ctx.app.inject({ method: 'POST', url: '/api/v1/forms', payload: { a: 1 } })
    console.log(post.statusCode, post.headers, post.body)
    const unk = await ctx.app.inject({ url: '/api/v1/nope', headers: { authorization: key.authorization } })
    console.log(unk.statusCode, unk.body)
    const unk2 = await ctx.app.inject({ url: '/api/v1/nope' })
    console.log(unk2.statusCode, unk2.body)
    const sub = await ctx.app.inject({
      url: '/api/v1/forms/zzz/submissions?page=2&page=3',
      headers: { authorization: key.authorization },
    })
    console.log(sub.statusCode, sub.body)
    const head = await ctx.app.inject({
      method: 'HEAD',
      url: '/api/v1/forms',
      headers: { authorization: key.authorization },
    })
    console.log(head.statusCode, head.headers, JSON.stringify(head.body))
    const bad = await ctx.app.inject({
      url: '/api/v1/forms/%zz/submissions',
      headers: { authorization: key.authorization },
    })
    console.log(bad.statusCode, bad.body)
    expect(res.statusCode).toBe(200)
  })
})
