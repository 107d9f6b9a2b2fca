import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createContentCache, readFormVersion, readKindVersion } from '../../src/db/content-version.js'
import { createServices } from '../../src/services/index.js'
import { buildForm, buildRedirect, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

describe('values kept per version', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  it("computes a value once while its form's submissions stay the same, and again after a write to them only", async () => {
    const cache = createContentCache<number>()
    const form = await buildForm(ctx.database.db)
    const other = await buildForm(ctx.database.db)
    let computed = 0
    const count = async () =>
      cache.get(form.id, await readFormVersion(ctx.database.db, form.id), async () => {
        computed++
        const rows = await ctx.database.db
          .selectFrom('submissions')
          .select('id')
          .where('form_id', '=', form.id)
          .execute()
        return rows.length
      })
    expect(await count()).toBe(0)
    const forms = await readKindVersion(ctx.database.db, 'forms')
    // Writes elsewhere (another form's submissions, a redirect) leave the value kept.
    await buildSubmission(ctx.database.db, { formId: other.id })
    await buildRedirect(ctx.database.db)
    expect(await count()).toBe(0)
    expect(computed).toBe(1)
    await buildSubmission(ctx.database.db, { formId: form.id })
    expect(await count()).toBe(1)
    expect(computed).toBe(2)
    // Submissions are not the forms list: its version stays.
    expect(await readKindVersion(ctx.database.db, 'forms')).toBe(forms)
  })

  it('keeps the inbox and forms list counts right when another instance writes', async () => {
    const form = await buildForm(ctx.database.db)
    await buildSubmission(ctx.database.db, { formId: form.id, isRead: false })
    const here = createServices(ctx.database)
    const elsewhere = createServices(ctx.database)
    const view = { formId: form.id, filter: 'unread' as const, sort: 'newest' as const, search: '' }
    const listed = () => here.lists.forms({ search: '', filter: 'all', sort: 'newest', size: 100, page: 1 })
    expect((await here.inbox.listPage(view, 1, 20)).total).toBe(1)
    expect((await listed()).items.find((item) => item.id === form.id)).toMatchObject({
      submissionCount: 1,
      unreadCount: 1,
    })
    const unread = await here.inbox.unreadTotal()

    const [only] = (await elsewhere.inbox.listPage(view, 1, 20)).items
    await elsewhere.inbox.applyBulk(form.id, [only?.id as string], 'read', 'cli')
    await buildSubmission(ctx.database.db, { formId: form.id, isRead: true })

    expect((await here.inbox.listPage(view, 1, 20)).total).toBe(0)
    expect((await listed()).items.find((item) => item.id === form.id)).toMatchObject({
      submissionCount: 2,
      unreadCount: 0,
    })
    expect(await here.inbox.unreadTotal()).toBe(unread - 1)
  })
})
