import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPublicAddress } from '../../src/services/notifications/addresses.js'
import { createTestContext, type TestContext } from '../harness.js'
import { listen, postForm } from '../intake/support.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { deliveries, notifyingServices, openForm, startReceiver, testNotifier } from './support.js'

describe('where webhooks may go', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
  })
  afterAll(() => ctx.close())

  it.each([
    'http://127.0.0.1/hook',
    'http://127.1.2.3:8080/hook',
    'http://localhost/hook',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://0.0.0.0/',
    'http://100.64.0.1/',
    'http://[::1]/',
    'http://[::]/',
    'http://[fe80::1]/',
    'http://[fd00::1]/',
    'http://[fc00::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[::127.0.0.1]/',
    'http://[::7f00:1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
  ])('refuses %s when an endpoint is added', async (url) => {
    const services = notifyingServices(ctx, false)
    await expect(services.webhooks.add({ url })).rejects.toThrow(/private, loopback or link-local/)
  })

  it.each([
    'ftp://example.com/',
    'example.com/hook',
    '/hook',
    'http://user:pw@example.com/',
    'javascript:alert(1)',
  ])('refuses %s, which is not an absolute http(s) URL without credentials', async (url) => {
    const services = notifyingServices(ctx, true)
    await expect(services.webhooks.add({ url })).rejects.toThrow(/URL must/)
  })

  it('takes an endpoint whose host does not resolve (yet), judging it again at each delivery', async () => {
    const services = notifyingServices(ctx, false)
    const { endpoint } = await services.webhooks.add({ url: 'https://hooks.lectern-test.invalid/in' })
    expect(endpoint.status).toBe('active')
    await services.webhooks.remove(endpoint.id)
  })

  it('tells public addresses from the rest', () => {
    expect(isPublicAddress('93.184.216.34')).toBe(true)
    expect(isPublicAddress('2606:2800:220:1:248:1893:25c8:1946')).toBe(true)
    expect(isPublicAddress('172.32.0.1')).toBe(true)
    expect(isPublicAddress('100.128.0.1')).toBe(true)
    expect(isPublicAddress('172.20.0.1')).toBe(false)
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(false)
    expect(isPublicAddress('::7f00:1')).toBe(false)
    expect(isPublicAddress('::a00:1')).toBe(false)
  })

  it('refuses again at delivery: an endpoint saved while private addresses were allowed gets nothing once they are not', async () => {
    const receiver = await startReceiver()
    const allowed = notifyingServices(ctx, true)
    const form = await openForm(ctx)
    const { endpoint } = await allowed.webhooks.add({ url: receiver.url, formId: form })
    const localhostUrl = receiver.url.replace('127.0.0.1', 'localhost')
    const { endpoint: named } = await allowed.webhooks.add({ url: localhostUrl, formId: form })
    const base = await listen(ctx.app)
    await postForm(base, form, { n: '1' }, { accept: 'application/json' })
    const strict = testNotifier(ctx, { allowPrivate: false })
    await strict.drain()
    await strict.stop()
    expect(receiver.received).toHaveLength(0)
    const rows = await deliveries(ctx)
    for (const id of [endpoint.id, named.id]) {
      const row = rows.find((r) => r.endpoint_id === id)
      expect(row).toMatchObject({ status: 'pending', attempts: 1, last_status: 'refused' })
    }
    await receiver.close()
  })
})
