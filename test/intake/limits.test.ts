import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { intakeForm, listen, postForm } from './support.js'

const JSON_MODE = { accept: 'application/json' }

describe('the per-address limit of POST /f/{formId}', () => {
  let ctx: TestContext
  let base: string

  beforeAll(async () => {
    // The default limit (5 a minute), and client addresses taken from X-Forwarded-For.
    ctx = await createTestContext({ ...GENEROUS_LIMITS, trustProxy: 'true' })
    base = await listen(ctx.app)
  })
  afterAll(() => ctx.close())

  const from = (address: string) => ({ ...JSON_MODE, 'x-forwarded-for': address })

  it('accepts exactly 5 of 20 simultaneous posts from one address, refusing the rest with 429 and Retry-After', async () => {
    const form = await intakeForm(ctx)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postForm(base, form, { n: String(i) }, from('203.0.113.1'))),
    )
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 201)).toHaveLength(5)
    expect(statuses.filter((status) => status === 429)).toHaveLength(15)
    for (const refused of answers.filter((answer) => answer.status === 429)) {
      expect(refused.json()).toEqual({ error: 'rate_limit_exceeded', message: expect.any(String) })
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60)
    }
  })

  it('answers a browser over the limit with a 429 page that says why, with Retry-After', async () => {
    const form = await intakeForm(ctx)
    const browser = {
      accept: 'text/html',
      'x-forwarded-for': '203.0.113.6',
      referer: 'https://www.example.com/c',
    }
    for (let i = 0; i < 5; i++) expect((await postForm(base, form, { n: '1' }, browser)).status).toBe(200)
    const refused = await postForm(base, form, { n: '1' }, browser)
    expect(refused.status).toBe(429)
    expect(refused.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/)
    expect(refused.body).toContain('Too many submissions')
    expect(refused.body).toContain('href="https://www.example.com/c"')
  })

  it('counts each address, and each form, apart', async () => {
    const form = await intakeForm(ctx)
    const other = await intakeForm(ctx)
    for (let i = 0; i < 5; i++)
      expect((await postForm(base, form, { n: '1' }, from('203.0.113.2'))).status).toBe(201)
    expect((await postForm(base, form, { n: '1' }, from('203.0.113.2'))).status).toBe(429)
    expect((await postForm(base, form, { n: '1' }, from('203.0.113.3'))).status).toBe(201)
    expect((await postForm(base, other, { n: '1' }, from('203.0.113.2'))).status).toBe(201)
  })

  it('does not count refused posts', async () => {
    const form = await intakeForm(ctx, { fields: [{ name: 'email', type: 'email', required: true }] })
    for (let i = 0; i < 10; i++)
      expect((await postForm(base, form, { email: 'nope' }, from('203.0.113.4'))).status).toBe(422)
    for (let i = 0; i < 5; i++)
      expect((await postForm(base, form, { email: 'ada@example.com' }, from('203.0.113.4'))).status).toBe(201)
    expect((await postForm(base, form, { email: 'ada@example.com' }, from('203.0.113.4'))).status).toBe(429)
  })

  it('counts honeypot posts, which look accepted', async () => {
    const form = await intakeForm(ctx)
    for (let i = 0; i < 5; i++)
      expect((await postForm(base, form, { _gotcha: 'bot' }, from('203.0.113.5'))).status).toBe(201)
    expect((await postForm(base, form, { n: '1' }, from('203.0.113.5'))).status).toBe(429)
  })
})
