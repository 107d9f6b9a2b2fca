import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BULK_STATEMENT_TIMEOUT_MS, openDatabase } from '../../src/db/database.js'
import { createImporter } from '../../src/services/import/index.js'
import type { Services } from '../../src/services/index.js'
import { NO_LISTENERS } from '../../src/services/notifications/outbox.js'
import { buildPage } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { listen, postForm } from '../intake/support.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import {
  deliveries,
  events,
  notifyingServices,
  openForm,
  type Receiver,
  startReceiver,
  testNotifier,
} from './support.js'

describe('the outbox', () => {
  let ctx: TestContext
  let services: Services
  let ok: Receiver

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    services = notifyingServices(ctx)
    ok = await startReceiver()
  })
  afterAll(async () => {
    await ok.close()
    await ctx.close()
  })

  it('writes nothing for an import when no endpoint or email would receive it', async () => {
    const form = await openForm(ctx)
    await ctx.services.importer.importRecords({
      submissions: Array.from({ length: 20 }, (_, i) => ({ formId: form, data: { i } })),
    })
    expect(await events(ctx)).toHaveLength(0)
  })

  it('writes a submission.created when a post caught as spam is released, and none while it is spam', async () => {
    const form = await openForm(ctx)
    await services.webhooks.add({ url: ok.url, formId: form, events: 'submission.created' })
    const before = (await events(ctx)).length
    const id = await ctx.services.intake.accept(
      form,
      {
        data: { message: 'not a bot after all' },
        ipAddress: null,
        userAgent: null,
        referrer: null,
        spam: true,
      },
      NO_LISTENERS,
    )
    expect(await events(ctx)).toHaveLength(before)
    await ctx.services.spam.release(id, 'cli')
    const written = (await events(ctx)).slice(before)
    expect(written.map((e) => [e.type, e.form_id, e.submission_id])).toEqual([
      ['submission.created', form, id],
    ])
  })

  it('writes an event and an email for the posts of a form with addresses to notify, alone or in a group with other forms, and none for the others', async () => {
    // Other forms with and without addresses: each post's form tells who listens to it alone.
    for (let i = 0; i < 5; i++)
      await openForm(ctx, i % 2 === 0 ? { notifyEmails: ['other@example.com'] } : {})
    const notified = await openForm(ctx, { notifyEmails: ['owner@example.com'] })
    const quiet = await openForm(ctx)
    const post = (n: number) => ({
      data: { n: String(n) },
      ipAddress: null,
      userAgent: null,
      referrer: null,
      spam: false,
    })
    // Who listens, read with each form as the intake's face reads it.
    const listenersOf = async (form: string) => (await ctx.services.intake.formForPost(form))?.listeners
    const [toNotified, toQuiet] = [await listenersOf(notified), await listenersOf(quiet)]
    expect([toNotified, toQuiet]).toEqual([
      { allForms: false, thisForm: true },
      { allForms: false, thisForm: false },
    ])
    if (toNotified === undefined || toQuiet === undefined) throw new Error('the forms exist')
    const before = (await events(ctx)).length
    const alone = await ctx.services.intake.accept(notified, post(1), toNotified)
    await ctx.services.intake.accept(quiet, post(2), toQuiet)
    // Accepted in one turn of the event loop, so they are written as one group of two forms.
    const grouped = await Promise.all([
      ctx.services.intake.accept(quiet, post(3), toQuiet),
      ctx.services.intake.accept(notified, post(4), toNotified),
      ctx.services.intake.accept(quiet, post(5), toQuiet),
    ])
    const written = (await events(ctx)).slice(before)
    expect(written.map((e) => [e.form_id, e.submission_id]).sort()).toEqual(
      [
        [notified, alone],
        [notified, grouped[1]],
      ].sort(),
    )
    const emails = (await deliveries(ctx)).filter(
      (d) => d.channel === 'email' && written.some((e) => e.id === d.event_id),
    )
    expect(emails).toHaveLength(2)
  })

  it('knows who listens to a post over HTTP from its form: its own endpoint, one of every form, addresses to notify, or nobody', async () => {
    const base = await listen(ctx.app)
    const quiet = await openForm(ctx)
    const emailed = await openForm(ctx, { notifyEmails: ['owner@example.com'] })
    const hooked = await openForm(ctx)
    await services.webhooks.add({ url: ok.url, formId: hooked, events: 'submission.created' })
    const later = await openForm(ctx)
    const before = (await events(ctx)).length
    const post = async (form: string) => {
      const answer = await postForm(base, form, { message: 'hello' }, { accept: 'application/json' })
      expect(answer.status).toBe(201)
      return (JSON.parse(answer.body) as { id: string }).id
    }
    const fromEmailed = await post(emailed)
    const fromHooked = await post(hooked)
    await post(quiet)
    await post(later)
    // An endpoint of every form, added since: the next post to a form nobody else listens to has an event.
    const everyForm = await services.webhooks.add({ url: ok.url, events: 'submission.created' })
    try {
      const fromLater = await post(later)
      const written = (await events(ctx)).slice(before)
      expect(written.map((e) => [e.form_id, e.submission_id]).sort()).toEqual(
        [
          [emailed, fromEmailed],
          [hooked, fromHooked],
          [later, fromLater],
        ].sort(),
      )
    } finally {
      await services.webhooks.remove(everyForm.endpoint.id)
    }
  })

  it('writes one submission.created per new imported submission of a notified form, none for updates', async () => {
    const notified = await openForm(ctx)
    const quiet = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({
      url: ok.url,
      formId: notified,
      events: 'submission.created',
    })
    await ctx.services.importer.importRecords({
      submissions: [{ id: 'submission_kept', formId: notified, data: { n: 0 } }],
    })
    const before = (await events(ctx)).length
    expect((await events(ctx)).filter((e) => e.form_id === notified)).toHaveLength(1)
    await ctx.services.importer.importRecords({
      submissions: [
        { id: 'submission_kept', formId: notified, data: { n: 'updated' } },
        { formId: notified, data: { n: 1 } },
        { formId: notified, data: { n: 2 } },
        { formId: quiet, data: { n: 3 } },
      ],
    })
    const written = (await events(ctx)).slice(before)
    expect(written.map((e) => [e.type, e.form_id])).toEqual([
      ['submission.created', notified],
      ['submission.created', notified],
    ])
    expect(written.map((e) => JSON.parse(e.data).data.n).sort()).toEqual([1, 2])
    const list = await services.webhooks.deliveries(endpoint.id, 10)
    expect(list).toHaveLength(3)
    await services.webhooks.remove(endpoint.id)
  })

  it('writes the events of a large sorted import in its transaction: only new rows of notified forms', async () => {
    const notified = await openForm(ctx)
    const quiet = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({ url: ok.url, formId: notified })
    const file = join(ctx.dir, 'big.ndjson')
    const lines: string[] = []
    for (let i = 0; i < 50_000; i++)
      lines.push(JSON.stringify({ kind: 'submission', formId: quiet, data: { i } }))
    for (let i = 0; i < 3; i++)
      lines.push(
        JSON.stringify({ kind: 'submission', id: `submission_big_${i}`, formId: notified, data: { i } }),
      )
    // A repeat of an id in the file is one new submission, not two.
    lines.push(
      JSON.stringify({ kind: 'submission', id: 'submission_big_0', formId: notified, data: { i: 'again' } }),
    )
    writeFileSync(file, `${lines.join('\n')}\n`)
    const before = (await events(ctx)).length
    // As `lectern import` runs it: its own process, and statements allowed to run long.
    const bulk = openDatabase(ctx.databaseUrl, { statementTimeoutMs: BULK_STATEMENT_TIMEOUT_MS })
    const importer = createImporter(bulk.db, { ownProcess: true })
    const result = await importer.importFile(file).finally(() => bulk.close())
    expect(result.created.submissions).toBe(50_003)
    const written = (await events(ctx)).slice(before)
    expect(written.map((e) => e.submission_id).sort()).toEqual([
      'submission_big_0',
      'submission_big_1',
      'submission_big_2',
    ])
    expect(
      JSON.parse(written.find((e) => e.submission_id === 'submission_big_0')?.data ?? '{}').data,
    ).toEqual({
      i: 'again',
    })
    expect(await services.webhooks.deliveries(endpoint.id, 10)).toHaveLength(3)
    await services.webhooks.remove(endpoint.id)
  }, 120_000)

  it('coalesces content changes: an import of many redirects is one content.changed, then at most one per 5 s', async () => {
    const { endpoint } = await services.webhooks.add({ url: ok.url, events: 'content.changed' })
    let now = Date.now()
    const notifier = testNotifier(ctx, { clock: () => now })
    // What changed before (forms made by earlier tests) is reported once first.
    await notifier.checkContent()
    now += 6_000
    expect(await notifier.checkContent()).toBeNull()
    await ctx.services.importer.importRecords({
      redirects: Array.from({ length: 300 }, (_, i) => ({ fromPath: `/old/${i}`, toPath: `/new/${i}` })),
    })
    expect(await notifier.checkContent()).toEqual(['redirects'])
    expect(await notifier.checkContent()).toBeNull()
    await buildPage(ctx.database.db, { path: '/coalesced' })
    await openForm(ctx)
    now += 2_000
    // Within 5 s of the last event: nothing yet, even from another worker (a restarted process).
    expect(await notifier.checkContent()).toBeNull()
    const restarted = testNotifier(ctx, { clock: () => now })
    expect(await restarted.checkContent()).toBeNull()
    now += 3_500
    expect(await restarted.checkContent()).toEqual(['forms', 'pages'])
    expect(await notifier.checkContent()).toBeNull()
    await restarted.drain()
    await notifier.stop()
    await restarted.stop()
    const delivered = ok.received
      .map((r) => JSON.parse(r.body))
      .filter((body) => body.type === 'content.changed')
    // The first check's event, the import's, and the coalesced one: three in all, sent at once.
    expect(delivered).toHaveLength(3)
    expect(delivered.map((body) => body.data)).toEqual(
      expect.arrayContaining([{ kinds: ['redirects'] }, { kinds: ['forms', 'pages'] }]),
    )
    await services.webhooks.remove(endpoint.id)
  })
})
