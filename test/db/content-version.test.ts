import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createContentCache, readContentVersion } from '../../src/db/content-version.js'
import { createServices } from '../../src/services/index.js'
import { buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

describe('values kept per content version', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  it('computes a value once while the content stays the same, and again after any write', async () => {
    const cache = createContentCache<number>(ctx.database.db)
    let computed = 0
    const count = async () =>
      cache.get('forms', await cache.version(), async () => {
        computed++
        const rows = await ctx.database.db.selectFrom('forms').select('id').execute()
        return rows.length
      })
    const before = await count()
    expect(await count()).toBe(before)
    expect(computed).toBe(1)
    const version = await readContentVersion(ctx.database.db)
    await buildForm(ctx.database.db)
    expect(await readContentVersion(ctx.database.db)).not.toBe(version)
    expect(await count()).toBe(before + 1)
    expect(computed).toBe(2)
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
