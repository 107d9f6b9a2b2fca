import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFormCounts } from '../../src/services/form-counts.js'
import { FormReadStale } from '../../src/services/intake.js'
import { NO_LISTENERS } from '../../src/services/notifications/outbox.js'
import { buildApiKey } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { intakeForm, listen, send } from './support.js'

// Posts arriving together are written in one transaction; these prove that sharing it loses,
// repeats and mixes up nothing.
describe('posts that arrive together', () => {
  let ctx: TestContext
  let base: string
  let auth: string

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 100_000 })
    base = await listen(ctx.app)
    auth = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  const listedIds = async (formId: string): Promise<string[]> => {
    const ids: string[] = []
    for (let page = 1; ; page++) {
      const answer = await send(
        base,
        'GET',
        `/api/v1/forms/${formId}/submissions?page=${page}&pageSize=100`,
        {
          authorization: auth,
        },
      )
      expect(answer.status).toBe(200)
      const body = answer.json() as { data: { id: string; data: Record<string, unknown> }[] }
      ids.push(...body.data.map((item) => item.id))
      if (body.data.length < 100) return ids
    }
  }

  it('stores each of 120 posts to two forms accepted in one turn once, in its own form, with exact counts', async () => {
    const first = await intakeForm(ctx)
    const second = await intakeForm(ctx)
    const posts = Array.from({ length: 120 }, (_, index) => ({
      form: index % 3 === 0 ? second : first,
      spam: index % 10 === 9,
      index,
    }))
    // Accepted in the same turn of the event loop, as posts from many connections are under load.
    const ids = await Promise.all(
      posts.map(({ form, spam, index }) =>
        ctx.services.intake.accept(
          form,
          {
            data: { n: String(index) },
            ipAddress: '192.0.2.1',
            userAgent: null,
            referrer: null,
            spam,
          },
          NO_LISTENERS,
        ),
      ),
    )
    expect(new Set(ids).size).toBe(120)

    for (const form of [first, second]) {
      const expected = posts.flatMap((post, index) => (post.form === form && !post.spam ? [ids[index]] : []))
      const listed = await listedIds(form)
      expect(listed.sort()).toEqual([...expected].sort())
      const stored = await ctx.database.db
        .selectFrom('submissions')
        .select(['id', 'data'])
        .where('form_id', '=', form)
        .execute()
      // Each row holds the body of the post its id was answered to.
      for (const row of stored) {
        const index = ids.indexOf(row.id)
        expect(JSON.parse(row.data)).toEqual({ n: String(index) })
      }
      const counts = (await createFormCounts(ctx.database.db)([form])).get(form)
      expect(counts).toEqual({ total: expected.length, unread: expected.length })
    }
    const spam = await ctx.database.db
      .selectFrom('spam_submissions')
      .select('id')
      .where('form_id', 'in', [first, second])
      .execute()
    expect(spam.map((row) => row.id).sort()).toEqual(
      posts.flatMap((post, index) => (post.spam ? [ids[index]] : [])).sort(),
    )
  })

  it('writes groups of every size it prepares, padded or not, with each row holding its own post and nothing else', async () => {
    const form = await intakeForm(ctx)
    // Read as the face reads it: each post is then stored only while its form is as read.
    const read = await ctx.services.intake.formForPost(form)
    if (read === null) throw new Error('the form was not found')
    const written: { id: string; index: number }[] = []
    // One to eight rows have a statement each; above, a group takes the next power of two's
    // statement with the rest padded: 12 of 16, 16 of 16, 17 of 32, 40 of 64, 100 of 128.
    const sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 40, 100]
    let next = 0
    for (const size of sizes) {
      const group = Array.from({ length: size }, () => next++)
      const ids = await Promise.all(
        group.map((index) =>
          ctx.services.intake.accept(
            form,
            {
              data: { n: String(index) },
              ipAddress: `192.0.2.${index % 256}`,
              userAgent: `agent ${index}`,
              referrer: `https://example.com/${index}`,
              spam: false,
            },
            read.listeners,
            read,
          ),
        ),
      )
      written.push(...ids.map((id, member) => ({ id, index: group[member] as number })))
    }
    const stored = await ctx.database.db
      .selectFrom('submissions')
      .select(['id', 'data', 'ip_address', 'user_agent', 'referrer', 'created_at', 'updated_at', 'is_read'])
      .where('form_id', '=', form)
      .execute()
    // The padding stored nothing: exactly the posts, once each.
    expect(stored).toHaveLength(next)
    expect(new Set(written.map(({ id }) => id)).size).toBe(next)
    for (const { id, index } of written) {
      const row = stored.find((candidate) => candidate.id === id)
      expect(row).toMatchObject({
        data: JSON.stringify({ n: String(index) }),
        ip_address: `192.0.2.${index % 256}`,
        user_agent: `agent ${index}`,
        referrer: `https://example.com/${index}`,
      })
      expect(Number(row?.is_read)).toBe(0)
      expect(row?.updated_at).toEqual(row?.created_at)
    }
    expect((await createFormCounts(ctx.database.db)([form])).get(form)).toEqual({ total: next, unread: next })
  })

  it('stores no post of a group whose form changed after it was read, and every other post of the group', async () => {
    const [changed, unchanged] = [await intakeForm(ctx), await intakeForm(ctx)]
    const reads = await Promise.all([changed, unchanged].map((form) => ctx.services.intake.formForPost(form)))
    const [changedRead, unchangedRead] = reads
    if (changedRead === null || changedRead === undefined || !unchangedRead) throw new Error('not found')
    // A change to any form moves the forms version: both reads are now out of date, and a fresh
    // read of the unchanged form is not.
    await ctx.services.intake.updateSettings(changed, { enabled: false })
    const fresh = await ctx.services.intake.formForPost(unchanged, { fresh: true })
    if (fresh === null) throw new Error('not found')
    const post = (n: number) => ({
      data: { n: String(n) },
      ipAddress: null,
      userAgent: null,
      referrer: null,
      spam: false,
    })
    // Twelve posts in one turn, written by the statement of sixteen rows with four of padding: one
    // in three on the fresh read (stored), the others on a read out of date (refused, unwritten).
    const attempts = Array.from({ length: 12 }, (_, n) =>
      n % 3 === 0
        ? { n, form: changed, read: changedRead }
        : n % 3 === 1
          ? { n, form: unchanged, read: fresh }
          : { n, form: unchanged, read: unchangedRead },
    )
    const settled = await Promise.allSettled(
      attempts.map(({ n, form, read }) => ctx.services.intake.accept(form, post(n), read.listeners, read)),
    )
    const storable = attempts.filter(({ read }) => read === fresh).map(({ n }) => n)
    expect(settled.map((result) => result.status)).toEqual(
      attempts.map(({ read }) => (read === fresh ? 'fulfilled' : 'rejected')),
    )
    for (const result of settled)
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(FormReadStale)
    const rows = await ctx.database.db
      .selectFrom('submissions')
      .select(['id', 'form_id', 'data'])
      .where('form_id', 'in', [changed, unchanged])
      .execute()
    expect(
      rows.map(({ form_id, data }) => ({ form_id, data })).sort((a, b) => a.data.localeCompare(b.data)),
    ).toEqual(
      storable
        .map((n) => ({ form_id: unchanged, data: JSON.stringify({ n: String(n) }) }))
        .sort((a, b) => a.data.localeCompare(b.data)),
    )
    const fulfilled = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
    expect(rows.map(({ id }) => id).sort()).toEqual([...fulfilled].sort())
    expect((await createFormCounts(ctx.database.db)([changed, unchanged])).get(unchanged)).toEqual({
      total: storable.length,
      unread: storable.length,
    })
  })

  it('refuses only the post whose write fails, and keeps the others of its group', async () => {
    const form = await intakeForm(ctx)
    const post = { data: { a: '1' }, ipAddress: null, userAgent: null, referrer: null, spam: false }
    // A form that no longer exists fails its insert (foreign key); the others share its turn.
    const settled = await Promise.allSettled([
      ctx.services.intake.accept(form, post, NO_LISTENERS),
      ctx.services.intake.accept('form_gone', post, NO_LISTENERS),
      ctx.services.intake.accept(form, post, NO_LISTENERS),
    ])
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    const kept = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
    const { rows } = await sql<{ id: string }>`select id from submissions where form_id = ${form}`.execute(
      ctx.database.db,
    )
    expect(rows.map((row) => row.id).sort()).toEqual(kept.sort())
    expect(
      await ctx.database.db
        .selectFrom('submissions')
        .select('id')
        .where('form_id', '=', 'form_gone')
        .execute(),
    ).toEqual([])
  })
})
