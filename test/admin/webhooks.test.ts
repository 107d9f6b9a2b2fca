import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js'
import type { Services } from '../../src/services/index.js'
import { createTestContext, type TestContext } from '../harness.js'
import {
  notifyingServices,
  openForm,
  type Receiver,
  startReceiver,
  testNotifier,
} from '../notifications/support.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { type DashboardClient, signedInClient, textOf } from './support.js'

const SECRET_IN_PAGE = /value="(whsec_[A-Za-z0-9+/=]+)"/

describe('Organization → Webhooks', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let services: Services
  let admin: DashboardClient
  let receiver: Receiver

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    services = notifyingServices(ctx)
    app = await buildApp({
      config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent' },
      services,
      limiter: new MemoryRateLimiter({ perHour: 1_000_000, perSecond: 1_000_000 }),
      database: ctx.database,
    })
    admin = (await signedInClient(app, ctx.database.db)).client
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await receiver.close()
    await app.close()
    await ctx.close()
  })

  const addEndpoint = (fields: string) =>
    admin.request({
      method: 'POST',
      url: '/admin/webhooks',
      payload: `_csrf=${encodeURIComponent(admin.csrf)}&${fields}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })

  it('is linked from the navigation, and says that email is off without SMTP settings', async () => {
    const home = await admin.get('/admin')
    expect(home.body).toContain('href="/admin/webhooks"')
    const list = await admin.get('/admin/webhooks')
    expect(list.statusCode).toBe(200)
    expect(textOf(list)).toContain('No webhook endpoints yet')
    expect(textOf(list)).toContain('Email notifications are off')
  })

  it('is for global admins only', async () => {
    const editor = (await signedInClient(app, ctx.database.db, 'editor')).client
    expect((await editor.get('/admin/webhooks')).statusCode).toBe(403)
  })

  it('adds an endpoint and shows its secret once, refuses a bad URL, and needs the CSRF token', async () => {
    await admin.get('/admin/webhooks/new')
    const forged = await admin.request({
      method: 'POST',
      url: '/admin/webhooks',
      payload: `url=${encodeURIComponent(receiver.url)}&events=content.changed`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(forged.statusCode).toBe(403)
    expect(await services.webhooks.list()).toHaveLength(0)
    await admin.get('/admin/webhooks/new')
    const bad = await addEndpoint('url=ftp%3A%2F%2Fexample.com%2F&events=content.changed')
    expect(bad.statusCode).toBe(422)
    expect(textOf(bad)).toContain('URL must use http or https')
    const added = await addEndpoint(
      `url=${encodeURIComponent(receiver.url)}&events=submission.created&events=content.changed`,
    )
    expect(added.statusCode).toBe(200)
    expect(added.headers['cache-control']).toBe('no-store')
    expect(textOf(added)).toContain('shown only once')
    const secret = SECRET_IN_PAGE.exec(added.body)?.[1]
    expect(secret).toMatch(/^whsec_/)
    const [endpoint] = await services.webhooks.list()
    expect(endpoint.events).toEqual(['submission.created', 'content.changed'])
    const list = await admin.get('/admin/webhooks')
    expect(list.body).toContain(receiver.url)
    expect(list.body).not.toContain(secret)
    expect(textOf(list)).toContain('Active')
  })

  it('lists deliveries with their result, resends one, rotates the secret and removes the endpoint', async () => {
    const [endpoint] = await services.webhooks.list()
    const form = await openForm(ctx)
    await ctx.services.importer.importRecords({ submissions: [{ formId: form, data: { a: 1 } }] })
    const notifier = testNotifier(ctx)
    await notifier.drain()
    const page = await admin.get(`/admin/webhooks/${endpoint.id}`)
    expect(page.statusCode).toBe(200)
    const [delivery] = await services.webhooks.deliveries(endpoint.id)
    // The event id is shortened in its cell, whole in its tooltip; the last answer is the status code.
    expect(page.body).toContain(`title="${delivery.eventId}"`)
    expect(textOf(page)).toContain(`${delivery.eventId.slice(0, 12)}…`)
    expect(delivery.responseCode).toBeGreaterThanOrEqual(200)
    expect(textOf(page)).toMatch(new RegExp(`Delivered\\s+1\\s+${delivery.responseCode}\\s`))
    const resent = await admin.post(`/admin/webhooks/${endpoint.id}/resend`, { eventId: delivery.eventId })
    expect(resent.statusCode).toBe(303)
    await notifier.drain()
    await notifier.stop()
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === delivery.eventId)).toHaveLength(2)
    await admin.get(`/admin/webhooks/${endpoint.id}`)
    const rotated = await admin.post(`/admin/webhooks/${endpoint.id}/rotate`)
    expect(rotated.statusCode).toBe(200)
    expect(SECRET_IN_PAGE.exec(rotated.body)?.[1]).toMatch(/^whsec_/)
    await admin.get(`/admin/webhooks/${endpoint.id}/remove`)
    const removed = await admin.post(`/admin/webhooks/${endpoint.id}/remove`)
    expect(removed.statusCode).toBe(303)
    expect(await services.webhooks.list()).toHaveLength(0)
    const audit = await ctx.services.audit.list({}, { page: 1, pageSize: 20 })
    const actions = audit.items.map((entry) => entry.action)
    for (const action of ['webhook.created', 'webhook.resent', 'webhook.secret_rotated', 'webhook.deleted'])
      expect(actions).toContain(action)
  })
})
