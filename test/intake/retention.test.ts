import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/errors.js'
import { createIntakeService } from '../../src/services/intake.js'
import { NO_LISTENERS } from '../../src/services/notifications/outbox.js'
import { formatTimestamp } from '../../src/time.js'
import { buildApiKey, buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { intakeForm, listen, postForm, send } from './support.js'

const DAY_MS = 86_400_000
const daysAgo = (days: number) => formatTimestamp(new Date(Date.now() - days * DAY_MS))

describe('retention of submissions', () => {
  let ctx: TestContext
  let base: string
  let auth: string

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 10_000 })
    base = await listen(ctx.app)
    auth = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  const listed = async (formId: string) =>
    (
      (await send(base, 'GET', `/api/v1/forms/${formId}/submissions`, { authorization: auth })).json() as {
        data: { id: string }[]
      }
    ).data.map((item) => item.id)

  const audited = () =>
    ctx.database.db.selectFrom('audit_log').selectAll().where('action', '=', 'submissions.expired').execute()

  it('deletes submissions older than retentionDays, keeps newer ones and other forms, and audits the run', async () => {
    const kept = await intakeForm(ctx, { retentionDays: 7 })
    const forever = await intakeForm(ctx)
    const old = await buildSubmission(ctx.database.db, { formId: kept, createdAt: daysAgo(8) })
    const recent = await buildSubmission(ctx.database.db, { formId: kept, createdAt: daysAgo(6) })
    const ancient = await buildSubmission(ctx.database.db, { formId: forever, createdAt: daysAgo(900) })
    const posted = (await postForm(base, kept, { a: '1' }, { accept: 'application/json' })).json()
      .id as string
    const before = (await audited()).length

    const run = await ctx.services.intake.purgeExpired()

    expect(run.submissions).toEqual({ [kept]: 1 })
    expect((await listed(kept)).sort()).toEqual([recent.id, posted].sort())
    expect(await listed(kept)).not.toContain(old.id)
    expect(await listed(forever)).toEqual([ancient.id])
    const entries = await audited()
    expect(entries).toHaveLength(before + 1)
    expect(entries.at(-1)).toMatchObject({ actor: 'system', target: 'retention' })
    expect(JSON.parse(entries.at(-1)?.detail ?? '{}')).toMatchObject({ submissions: { [kept]: 1 } })
  })

  it('deletes a posted submission once it is older than the form keeps them, as the API then shows', async () => {
    const form = await intakeForm(ctx, { retentionDays: 1 })
    const posted = await postForm(base, form, { a: '1' }, { accept: 'application/json' })
    expect(await listed(form)).toEqual([posted.json().id])
    const later = createIntakeService(ctx.database, { clock: () => Date.now() + 2 * DAY_MS })
    await later.purgeExpired()
    expect(await listed(form)).toEqual([])
  })

  it('deletes spam after 30 days', async () => {
    const form = await intakeForm(ctx)
    const past = createIntakeService(ctx.database, { clock: () => Date.now() - 31 * DAY_MS })
    const post = { data: { a: '1' }, ipAddress: null, userAgent: null, referrer: null, spam: true }
    await past.accept(form, post, NO_LISTENERS)
    await ctx.services.intake.accept(form, post, NO_LISTENERS)
    expect(await ctx.services.intake.spamCount(form)).toBe(2)
    const run = await ctx.services.intake.purgeExpired()
    expect(run.spam).toBe(1)
    expect(await ctx.services.intake.spamCount(form)).toBe(1)
  })

  it('runs on one instance at a time: of two asking at once one purges, then none until the lease ends', async () => {
    let now = Date.now() + 10 * DAY_MS
    const instances = [0, 1].map(() => createIntakeService(ctx.database, { clock: () => now }))
    const first = await Promise.all(instances.map((instance) => instance.purgeIfDue()))
    expect(first.filter((run) => run !== null)).toHaveLength(1)
    now += 30 * 60_000
    expect(await Promise.all(instances.map((instance) => instance.purgeIfDue()))).toEqual([null, null])
    now += 30 * 60_000
    const hourLater = await Promise.all(instances.map((instance) => instance.purgeIfDue()))
    expect(hourLater.filter((run) => run !== null)).toHaveLength(1)
  })
})

describe('intake settings', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
  })
  afterAll(() => ctx.close())

  it('audits a change as form.intake_changed, naming the settings that changed', async () => {
    const { id } = await buildForm(ctx.database.db)
    await ctx.services.intake.updateSettings(
      id,
      { enabled: true, retentionDays: 30 },
      { email: 'ada@example.com' },
    )
    const entry = await ctx.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'form.intake_changed')
      .where('target', '=', id)
      .executeTakeFirstOrThrow()
    expect(entry.actor).toBe('ada@example.com')
    expect(JSON.parse(entry.detail ?? '{}')).toEqual({ changed: ['enabled', 'retentionDays'], enabled: true })
  })

  it('refuses bad settings, naming every problem, and changes nothing', async () => {
    const id = await intakeForm(ctx, { redirectUrl: '/thanks' })
    const error = await ctx.services.intake
      .updateSettings(id, {
        redirectUrl: 'javascript:alert(1)',
        notifyEmails: ['not an address', 'owner@example.com', 'ops@localhost'],
        fields: [{ name: 'pick', type: 'select' }],
      })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as ValidationError).problems).toEqual([
      'redirectUrl must be an absolute http(s) URL or a path starting with / (got "javascript:alert(1)")',
      'notifyEmails[0] must be one plain email address such as owner@example.com (got "not an address")',
      // Mail could not be sent to it: refused here rather than left out of every message.
      'notifyEmails[2] must be one plain email address such as owner@example.com (got "ops@localhost")',
      'fields[0].options must be an array of 1 to 200 strings for a select',
    ])
    expect((await ctx.services.intake.form(id))?.settings.redirectUrl).toBe('/thanks')
  })
})
