import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFormStates } from '../../src/db/content-version.js'
import { buildApiKey, buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

// A page of a form's submissions reads the form's state (version, total, unread count, whether it
// exists) in the key check's own statement: one statement per request instead of two.
describe("a form's state read with the key", () => {
  let ctx: TestContext
  let key: string

  beforeAll(async () => {
    ctx = await createTestContext()
    key = (await buildApiKey(ctx.database.db)).plainKey
  })
  afterAll(() => ctx.close())

  const check = async (formId?: string) => {
    const result = await ctx.services.keys.checkApiKey(key, undefined, formId)
    if (result.status !== 'valid') throw new Error(`the key was found ${result.status}`)
    return result
  }

  it('is what a read of the form on its own finds, and follows each write on the next check', async () => {
    const { id } = await buildForm(ctx.database.db)
    const states = async () => (await readFormStates(ctx.database.db, [id])).get(id)
    const before = (await check(id)).form
    expect(before).toEqual(await states())
    expect(before).toMatchObject({ exists: true, total: 0, unread: 0 })
    for (let i = 0; i < 3; i++) await buildSubmission(ctx.database.db, { formId: id, isRead: i === 0 })
    const after = await check(id)
    expect(after.form).toEqual(await states())
    expect(after.form).toMatchObject({ exists: true, total: 3, unread: 2 })
    expect(after.form?.version).toBeGreaterThan(before?.version ?? Number.POSITIVE_INFINITY)
    await ctx.database.db.deleteFrom('forms').where('id', '=', id).execute()
    expect((await check(id)).form?.exists).toBe(false)
  })

  it('reads a form that never existed as absent, and reads no form when none is named', async () => {
    expect((await check('form_never')).form).toEqual({ exists: false, version: 0, total: 0, unread: 0 })
    expect((await check()).form).toBeUndefined()
  })

  it('answers requests of one key for two forms in the same turn each with its own form', async () => {
    const [first, second] = [await buildForm(ctx.database.db), await buildForm(ctx.database.db)]
    await buildSubmission(ctx.database.db, { formId: first.id })
    const [a, b] = await Promise.all([check(first.id), check(second.id)])
    expect(a.form?.total).toBe(1)
    expect(b.form?.total).toBe(0)
  })
})
