import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServices, type Services } from '../../src/services/index.js'
import { keySource } from '../../src/services/notifications/secrets.js'
import { createTestContext, type TestContext } from '../harness.js'
import { listen, postForm, postJson } from '../intake/support.js'
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

const JSON_MODE = { accept: 'application/json' }

describe('webhook delivery', () => {
  let ctx: TestContext
  let base: string
  let services: Services
  const receivers: Receiver[] = []
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const started = await startReceiver(...args)
    receivers.push(started)
    return started
  }

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 1000 })
    base = await listen(ctx.app)
    services = notifyingServices(ctx)
  })
  afterAll(async () => {
    for (const r of receivers) await r.close()
    await ctx.close()
  })

  it('posts a signed submission.created that a Standard Webhooks library verifies', async () => {
    const ok = await receiver()
    const form = await openForm(ctx)
    const { endpoint, secret } = await services.webhooks.add({ url: ok.url, formId: form })
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const posted = await postJson(base, form, { name: 'Ada', email: 'ada@example.com' }, JSON_MODE)
    expect(posted.status).toBe(201)
    const submissionId = posted.json().id
    const notifier = testNotifier(ctx)
    expect(await notifier.drain()).toBe(1)
    await notifier.stop()

    expect(ok.received).toHaveLength(1)
    const { headers, body } = ok.received[0]
    expect(headers['content-type']).toBe('application/json')
    const verified = new Webhook(secret).verify(body, {
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(headers['webhook-timestamp']),
      'webhook-signature': String(headers['webhook-signature']),
    }) as Record<string, unknown>
    expect(verified).toEqual({
      id: headers['webhook-id'],
      type: 'submission.created',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      data: {
        id: submissionId,
        data: { name: 'Ada', email: 'ada@example.com' },
        ipAddress: '127.0.0.1',
        userAgent: null,
        referrer: null,
        submittedBy: null,
        isRead: false,
        isStarred: false,
        notes: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        formId: form,
      },
    })
    expect(String(headers['webhook-id'])).toMatch(/^evt_/)
    // Another secret does not verify it.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(body, {
        'webhook-id': String(headers['webhook-id']),
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      }),
    ).toThrow()
    const [delivery] = await services.webhooks.deliveries(endpoint.id)
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatus: 'delivered',
      responseCode: 200,
    })
    await services.webhooks.remove(endpoint.id)
  })

  it('notifies of no spam, and of no form the endpoint is not for', async () => {
    const ok = await receiver()
    const form = await openForm(ctx)
    const other = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({ url: ok.url, formId: form })
    const before = (await events(ctx)).length
    expect((await postForm(base, form, { name: 'bot', _gotcha: 'x' }, JSON_MODE)).status).toBe(201)
    expect((await postForm(base, other, { name: 'elsewhere' }, JSON_MODE)).status).toBe(201)
    expect(await events(ctx)).toHaveLength(before)
    const notifier = testNotifier(ctx)
    expect(await notifier.drain()).toBe(0)
    await notifier.stop()
    expect(ok.received).toHaveLength(0)
    await services.webhooks.remove(endpoint.id)
  })

  it('retries a failing endpoint with growing delays, the same webhook-id each time, then gives up after three days', async () => {
    const failing = await receiver(() => 500)
    const form = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({
      url: failing.url,
      formId: form,
      events: 'submission.created',
    })
    await postForm(base, form, { n: '1' }, JSON_MODE)
    // Read after the post: its delivery is due at the post's whole second, which a clock read
    // before it could precede when the post lands in the next second.
    let now = Date.now()
    const notifier = testNotifier(ctx, { clock: () => now })
    expect(await notifier.runOnce()).toBe(1)
    // Not due again before its delay (about 5 s).
    expect(await notifier.runOnce()).toBe(0)
    const delays: number[] = []
    for (let attempt = 1; attempt < 40; attempt++) {
      const [row] = (await deliveries(ctx)).filter((d) => d.endpoint_id === endpoint.id)
      if (row.status !== 'pending') break
      delays.push(Date.parse(row.next_attempt_at) - now)
      now = Date.parse(row.next_attempt_at) + 1000
      expect(await notifier.runOnce()).toBe(1)
    }
    await notifier.stop()
    const [row] = (await deliveries(ctx)).filter((d) => d.endpoint_id === endpoint.id)
    expect(row).toMatchObject({ status: 'failed', last_status: 'http_500', response_code: 500 })
    // ~5 s, ~1 min, ~10 min, ~1 h, then ~6 h (±20%, seconds rounded).
    expect(delays[0]).toBeGreaterThanOrEqual(3_000)
    expect(delays[0]).toBeLessThanOrEqual(7_000)
    expect(delays[1]).toBeGreaterThanOrEqual(47_000)
    expect(delays[1]).toBeLessThanOrEqual(73_000)
    expect(delays[2]).toBeGreaterThanOrEqual(479_000)
    expect(delays[3]).toBeGreaterThanOrEqual(2_879_000)
    expect(delays[4]).toBeGreaterThanOrEqual(17_279_000)
    expect(delays[4]).toBeLessThanOrEqual(25_921_000)
    // Three days of six-hourly attempts after the first hour or so: about 15 attempts in all.
    expect(Number(row.attempts)).toBeGreaterThanOrEqual(12)
    expect(Number(row.attempts)).toBeLessThanOrEqual(20)
    expect(new Set(failing.received.map((r) => r.headers['webhook-id'])).size).toBe(1)
    expect(failing.received).toHaveLength(Number(row.attempts))
    const shown = await services.webhooks.get(endpoint.id)
    expect(shown.status).toBe('failing')
    await services.webhooks.remove(endpoint.id)
  })

  it('disables an endpoint that answers 410 Gone, and sends it nothing more', async () => {
    const gone = await receiver(() => 410)
    const form = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({ url: gone.url, formId: form })
    await postForm(base, form, { n: '1' }, JSON_MODE)
    await postForm(base, form, { n: '2' }, JSON_MODE)
    const notifier = testNotifier(ctx, { concurrency: 1 })
    await notifier.drain()
    expect(gone.received).toHaveLength(1)
    expect((await services.webhooks.get(endpoint.id)).status).toBe('disabled')
    await postForm(base, form, { n: '3' }, JSON_MODE)
    expect(await notifier.drain()).toBe(0)
    await notifier.stop()
    expect(gone.received).toHaveLength(1)
    const list = await services.webhooks.deliveries(endpoint.id)
    expect(list.map((d) => d.status).sort()).toEqual(['failed', 'failed'])
    expect(list.map((d) => d.lastStatus).sort()).toEqual(['endpoint_disabled', 'gone'])
    await services.webhooks.remove(endpoint.id)
  })

  it('gives up an attempt that gets no answer in time, and tries again later', async () => {
    const slow = await receiver(() => new Promise((resolve) => setTimeout(() => resolve(200), 11_000)))
    const form = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({ url: slow.url, formId: form })
    await postForm(base, form, { n: '1' }, JSON_MODE)
    const notifier = testNotifier(ctx, { timeoutMs: 500 })
    await notifier.drain()
    await notifier.stop()
    const [row] = (await deliveries(ctx)).filter((d) => d.endpoint_id === endpoint.id)
    expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 'timeout', response_code: null })
    expect(slow.received).toHaveLength(1)
    await services.webhooks.remove(endpoint.id)
  })

  it('signs with both secrets while a rotated-out one overlaps, each verifying on its own', async () => {
    const ok = await receiver()
    const form = await openForm(ctx)
    const { endpoint, secret: old } = await services.webhooks.add({ url: ok.url, formId: form })
    const { secret: fresh } = await services.webhooks.rotateSecret(endpoint.id)
    expect(fresh).not.toBe(old)
    await postForm(base, form, { n: '1' }, JSON_MODE)
    const notifier = testNotifier(ctx)
    await notifier.drain()
    await notifier.stop()
    const { headers, body } = ok.received[0]
    const signatures = String(headers['webhook-signature']).split(' ')
    expect(signatures).toHaveLength(2)
    for (const [secret, signature] of [
      [fresh, signatures[0]],
      [old, signatures[1]],
    ]) {
      expect(() =>
        new Webhook(secret).verify(body, {
          'webhook-id': String(headers['webhook-id']),
          'webhook-timestamp': String(headers['webhook-timestamp']),
          'webhook-signature': signature,
        }),
      ).not.toThrow()
    }
    await services.webhooks.remove(endpoint.id)
  })

  it('signs with the new secret alone when the rotated-out one was sealed under a SECRET_KEY since changed', async () => {
    const ok = await receiver()
    const form = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({ url: ok.url, formId: form })
    // The operator changes SECRET_KEY, then rotates the secret, as the docs ask.
    const newKey = 'another-secret-key-0123456789abcdefghijkl'
    const rekeyed = createServices(ctx.database, { notifications: { secretKey: newKey, allowPrivate: true } })
    const { secret: fresh } = await rekeyed.webhooks.rotateSecret(endpoint.id)
    await postForm(base, form, { n: '1' }, JSON_MODE)
    const notifier = testNotifier(ctx, { secretKey: keySource(ctx.database, newKey) })
    await notifier.drain()
    await notifier.stop()
    const [row] = (await deliveries(ctx)).filter((d) => d.endpoint_id === endpoint.id)
    expect(row).toMatchObject({ status: 'delivered', attempts: 1 })
    const { headers, body } = ok.received[0]
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(() =>
      new Webhook(fresh).verify(body, {
        'webhook-id': String(headers['webhook-id']),
        'webhook-timestamp': String(headers['webhook-timestamp']),
        'webhook-signature': String(headers['webhook-signature']),
      }),
    ).not.toThrow()
    await services.webhooks.remove(endpoint.id)
  })

  it('lists deliveries newest first, also those of posts made within one second', async () => {
    const ok = await receiver()
    const form = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({ url: ok.url, formId: form })
    const posted: string[] = []
    for (let n = 0; n < 6; n++) {
      posted.push(String((await postForm(base, form, { n: String(n) }, JSON_MODE)).json().id))
      // A few milliseconds apart, as no two people post at once: ids order events by the millisecond.
      await new Promise((resolve) => setTimeout(resolve, 3))
    }
    const listed = await services.webhooks.deliveries(endpoint.id)
    const submissionOf = new Map((await events(ctx)).map((event) => [event.id, event.submission_id]))
    expect(listed.map((delivery) => submissionOf.get(delivery.eventId))).toEqual([...posted].reverse())
    await services.webhooks.remove(endpoint.id)
  })

  it('resends a delivered event with the same webhook-id', async () => {
    const ok = await receiver()
    const form = await openForm(ctx)
    const { endpoint } = await services.webhooks.add({ url: ok.url, formId: form })
    await postForm(base, form, { n: '1' }, JSON_MODE)
    const notifier = testNotifier(ctx)
    await notifier.drain()
    const [delivery] = await services.webhooks.deliveries(endpoint.id)
    await services.webhooks.resend(delivery.eventId, endpoint.id)
    expect(await notifier.drain()).toBe(1)
    await notifier.stop()
    expect(ok.received.map((r) => r.headers['webhook-id'])).toEqual([delivery.eventId, delivery.eventId])
    const audit = await ctx.services.audit.list({ action: 'webhook.resent' }, { page: 1, pageSize: 5 })
    expect(audit.items[0]).toMatchObject({ target: endpoint.id, detail: { eventId: delivery.eventId } })
    await services.webhooks.remove(endpoint.id)
  })
})
