import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { createServices, type Services } from '../../src/services/index.js'
import { createTestContext, type TestContext } from '../harness.js'
import { type Receiver, SECRET_KEY, startReceiver } from '../notifications/support.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { intakeForm, listen, postForm } from './support.js'

// Each instance remembers the forms it takes posts for and decides a post without reading its
// form; these prove that a change made elsewhere (another instance, the CLI) still decides the very
// next post, in both directions: what the form now refuses is refused, what it now allows is taken.
describe('posts to a form this instance remembers', () => {
  let ctx: TestContext
  let base: string
  // Another process's view of the same database: its own connection and its own services.
  let elsewhere: DatabaseHandle
  let other: Services
  let receiver: Receiver

  beforeAll(async () => {
    // Three posts per address and form a minute: enough for every test, and few enough to show a
    // post counted twice.
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 3 })
    base = await listen(ctx.app)
    elsewhere = openDatabase(ctx.databaseUrl)
    other = createServices(elsewhere, { notifications: { secretKey: SECRET_KEY, allowPrivate: true } })
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await receiver.close()
    await elsewhere.close()
    await ctx.close()
  })

  const stored = async (formId: string) =>
    (await ctx.database.db.selectFrom('submissions').select('id').where('form_id', '=', formId).execute())
      .length

  /** A form that has taken one post on this instance, so that the instance remembers it. */
  const remembered = async (settings: Record<string, unknown> = {}) => {
    const form = await intakeForm(ctx, settings)
    expect((await postForm(base, form, { message: 'first' }, { accept: 'application/json' })).status).toBe(
      201,
    )
    return form
  }

  it('refuses the next post to a form switched off elsewhere, and stores nothing', async () => {
    const form = await remembered()
    await other.intake.updateSettings(form, { enabled: false })
    const answer = await postForm(base, form, { message: 'late' }, { accept: 'application/json' })
    expect(answer.status).toBe(404)
    expect(await stored(form)).toBe(1)
  })

  it('refuses the next post to a form deleted elsewhere', async () => {
    const form = await remembered()
    await elsewhere.db.deleteFrom('forms').where('id', '=', form).execute()
    expect((await postForm(base, form, { message: 'late' }, { accept: 'application/json' })).status).toBe(404)
    expect(await stored(form)).toBe(0)
  })

  it('applies a field made required elsewhere to the next post', async () => {
    const form = await remembered()
    await other.intake.updateSettings(form, {
      enabled: true,
      fields: [{ name: 'email', type: 'email', label: 'Email', required: true }],
    })
    const answer = await postForm(base, form, { message: 'no address' }, { accept: 'application/json' })
    expect(answer.status).toBe(422)
    expect(answer.json().fields).toHaveProperty('email')
    expect(await stored(form)).toBe(1)
  })

  it('takes the next post from an origin allowed elsewhere since, though the remembered form refused it', async () => {
    const form = await remembered({ allowedOrigins: ['https://a.example'] })
    await other.intake.updateSettings(form, {
      enabled: true,
      allowedOrigins: ['https://a.example', 'https://b.example'],
    })
    const answer = await postForm(
      base,
      form,
      { message: 'from b' },
      { accept: 'application/json', origin: 'https://b.example' },
    )
    expect(answer.status).toBe(201)
    expect(answer.headers['access-control-allow-origin']).toBe('https://b.example')
    expect(await stored(form)).toBe(2)
  })

  it('takes the next post without a field no longer required elsewhere', async () => {
    const form = await remembered({
      fields: [{ name: 'message', type: 'text', label: 'Message', required: true }],
    })
    await other.intake.updateSettings(form, { enabled: true })
    expect((await postForm(base, form, { other: 'x' }, { accept: 'application/json' })).status).toBe(201)
    expect(await stored(form)).toBe(2)
  })

  it('writes the event of a webhook added elsewhere with the next post', async () => {
    const form = await remembered()
    await other.webhooks.add({ url: receiver.url, formId: form, events: 'submission.created' })
    const answer = await postForm(base, form, { message: 'heard' }, { accept: 'application/json' })
    expect(answer.status).toBe(201)
    const id = answer.json().id as string
    const events = await ctx.database.db
      .selectFrom('notification_events')
      .select('id')
      .where('type', '=', 'submission.created')
      .where('submission_id', '=', id)
      .execute()
    expect(events).toHaveLength(1)
  })

  it('answers a honeypot post to a form switched off elsewhere as the form now is, and keeps no spam', async () => {
    const form = await remembered()
    await other.intake.updateSettings(form, { enabled: false })
    const answer = await postForm(
      base,
      form,
      { message: 'bot', _gotcha: 'x' },
      { accept: 'application/json' },
    )
    expect(answer.status).toBe(404)
    const spam = await ctx.database.db
      .selectFrom('spam_submissions')
      .select('id')
      .where('form_id', '=', form)
      .execute()
    expect(spam).toHaveLength(0)
  })

  it('stores a post to a remembered form unchanged, and counts it once against the address limit', async () => {
    const form = await remembered()
    // Another form changing moves the forms version too: the post is decided again and stored once.
    await other.intake.updateSettings(await intakeForm(ctx), { enabled: true, storeIpAddress: false })
    const answer = await postForm(base, form, { message: 'second' }, { accept: 'application/json' })
    expect(answer.status).toBe(201)
    expect(await stored(form)).toBe(2)
    // Decided twice, counted once: the third post of the minute is taken, the fourth refused.
    const third = await postForm(base, form, { message: 'third' }, { accept: 'application/json' })
    expect(third.status).toBe(201)
    const fourth = await postForm(base, form, { message: 'fourth' }, { accept: 'application/json' })
    expect(fourth.status).toBe(429)
    expect(await stored(form)).toBe(3)
  })
})
