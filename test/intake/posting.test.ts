import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFormCounts } from '../../src/services/form-counts.js'
import { buildApiKey, buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { intakeForm, listen, multipart, postForm, postJson, send } from './support.js'

const JSON_MODE = { accept: 'application/json' }
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' }

const FIELDS = [
  { name: 'email', type: 'email', required: true },
  { name: 'age', type: 'number' },
  { name: 'topic', type: 'select', options: ['sales', 'support'] },
  { name: 'day', type: 'date' },
  { name: 'site', type: 'url' },
  { name: 'nick', type: 'text', maxLength: 5 },
]

describe('POST /f/{formId}', () => {
  let ctx: TestContext
  let base: string
  let auth: string
  let open: string
  let guarded: string
  let ruled: string
  let unnamed: string

  const listed = async (formId: string) => {
    const answer = await send(base, 'GET', `/api/v1/forms/${formId}/submissions`, { authorization: auth })
    expect(answer.status).toBe(200)
    return answer.json() as { data: Record<string, unknown>[]; meta: { total: number } }
  }

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 10_000 })
    base = await listen(ctx.app)
    auth = (await buildApiKey(ctx.database.db)).authorization
    open = await intakeForm(ctx)
    guarded = await intakeForm(ctx, {
      allowedOrigins: ['https://www.example.com'],
      redirectUrl: 'https://www.example.com/thanks',
    })
    ruled = await intakeForm(ctx, { fields: FIELDS, redirectUrl: '/thanks' })
    unnamed = await intakeForm(ctx, { storeIpAddress: false })
  })
  afterAll(() => ctx.close())

  it('stores a urlencoded post, answers 201 with its id in JSON mode, and the API lists it at once', async () => {
    const answer = await postForm(
      base,
      open,
      { name: 'Ada', message: 'Hello' },
      { ...JSON_MODE, 'user-agent': 'TestBrowser/1.0', referer: 'https://www.example.com/contact' },
    )
    expect(answer.status).toBe(201)
    const { id } = answer.json()
    expect(id).toMatch(/^submission_/)
    const { data } = await listed(open)
    expect(data.find((item) => item.id === id)).toMatchObject({
      id,
      data: { name: 'Ada', message: 'Hello' },
      ipAddress: '127.0.0.1',
      userAgent: 'TestBrowser/1.0',
      referrer: 'https://www.example.com/contact',
      submittedBy: null,
      isRead: false,
      isStarred: false,
    })
  })

  it('makes a name given several times an array of strings, and never stores control fields', async () => {
    const answer = await postForm(
      base,
      open,
      'colour=red&colour=blue&_next=%2Fx&_gotcha=&note=a+b%21',
      JSON_MODE,
    )
    expect(answer.status).toBe(201)
    const stored = (await listed(open)).data.find((item) => item.id === answer.json().id)
    expect(stored?.data).toEqual({ colour: ['red', 'blue'], note: 'a b!' })
  })

  it('reads UTF-8 whether it is percent-encoded or sent as it is', async () => {
    const encoded = await postForm(base, open, 'name=Zo%C3%AB&city=K%C3%B8benhavn', JSON_MODE)
    const plain = await send(
      base,
      'POST',
      `/f/${open}`,
      { 'content-type': 'application/x-www-form-urlencoded', ...JSON_MODE },
      Buffer.from('name=Zoë&city=København', 'utf8'),
    )
    for (const answer of [encoded, plain]) {
      expect(answer.status).toBe(201)
      const stored = (await listed(open)).data.find((item) => item.id === answer.json().id)
      expect(stored?.data).toEqual({ name: 'Zoë', city: 'København' })
    }
  })

  it('keeps JSON numbers and booleans of fields the form does not define as they were sent', async () => {
    const answer = await postJson(base, open, { count: 3, subscribe: true, tags: ['a', 'b'], text: 'x' })
    expect(answer.status).toBe(201)
    const stored = (await listed(open)).data.find((item) => item.id === answer.json().id)
    expect(stored?.data).toEqual({ count: 3, subscribe: true, tags: ['a', 'b'], text: 'x' })
  })

  it('stores the text parts of a multipart post', async () => {
    const { contentType, body } = multipart([
      { name: 'name', value: 'Grace' },
      { name: 'message', value: 'Line one\r\nLine two' },
    ])
    const answer = await send(base, 'POST', `/f/${open}`, { 'content-type': contentType, ...JSON_MODE }, body)
    expect(answer.status).toBe(201)
    const stored = (await listed(open)).data.find((item) => item.id === answer.json().id)
    expect(stored?.data).toEqual({ name: 'Grace', message: 'Line one\r\nLine two' })
  })

  it('stores no address or user agent when the form says not to', async () => {
    const answer = await postForm(
      base,
      unnamed,
      { a: '1' },
      { ...JSON_MODE, 'user-agent': 'TestBrowser/1.0' },
    )
    expect(answer.status).toBe(201)
    const stored = (await listed(unnamed)).data.find((item) => item.id === answer.json().id)
    expect(stored).toMatchObject({ ipAddress: null, userAgent: null, data: { a: '1' } })
  })

  describe('in HTML mode', () => {
    it('answers a browser with a thank-you page', async () => {
      const answer = await postForm(base, open, { a: '1' }, BROWSER)
      expect(answer.status).toBe(200)
      expect(answer.headers['content-type']).toMatch(/^text\/html/)
      expect(answer.body).toContain('Thank you')
    })

    it('sends a browser to the redirect URL with 303', async () => {
      const answer = await postForm(
        base,
        guarded,
        { a: '1' },
        { ...BROWSER, origin: 'https://www.example.com' },
      )
      expect(answer.status).toBe(303)
      expect(answer.headers.location).toBe('https://www.example.com/thanks')
    })

    it('sends a browser to a redirect path on the site it posted from', async () => {
      const answer = await postForm(
        base,
        ruled,
        { email: 'ada@example.com' },
        { ...BROWSER, referer: 'https://shop.example.org/contact?x=1' },
      )
      expect(answer.status).toBe(303)
      expect(answer.headers.location).toBe('https://shop.example.org/thanks')
    })

    it.each([
      ['a hidden one', 'null'],
      ['a header that is no origin', 'not an origin'],
    ])('sends a browser to the redirect path as given when its origin is %s', async (_, origin) => {
      const answer = await postForm(base, ruled, { email: 'ada@example.com' }, { ...BROWSER, origin })
      expect(answer.status).toBe(303)
      expect(answer.headers.location).toBe('/thanks')
    })
  })

  describe('field rules', () => {
    const refused = async (fields: Record<string, string>) => {
      const answer = await postForm(base, ruled, fields, JSON_MODE)
      expect(answer.status).toBe(422)
      const body = answer.json()
      expect(body.error).toBe('validation_failed')
      return body.fields as Record<string, string>
    }

    it('refuses a missing or blank required field', async () => {
      expect(await refused({ age: '3' })).toEqual({ email: 'is required' })
      expect(await refused({ email: '   ' })).toEqual({ email: 'is required' })
    })

    it('refuses values that are not what their type asks, naming each field', async () => {
      expect(
        await refused({
          email: 'not-an-address',
          age: 'twelve',
          topic: 'gossip',
          day: '2024-02-30',
          site: 'ftp://example.com',
          nick: 'toolong',
        }),
      ).toEqual({
        email: 'must be an email address',
        age: 'must be a number',
        topic: 'must be one of sales, support',
        day: 'must be a date (YYYY-MM-DD)',
        site: 'must be an absolute http(s) URL',
        nick: 'must be at most 5 characters',
      })
    })

    it('accepts values that follow every rule, and fields the form does not define', async () => {
      const answer = await postForm(
        base,
        ruled,
        {
          email: 'ada@example.com',
          age: '-3.5',
          topic: 'support',
          day: '2024-02-29',
          site: 'https://ada.example',
          nick: 'ada',
          extra: 'kept',
        },
        JSON_MODE,
      )
      expect(answer.status).toBe(201)
    })
  })

  describe('the honeypot', () => {
    it('answers a filled-in _gotcha exactly like a success and keeps it out of the API', async () => {
      const form = await intakeForm(ctx)
      const real = await postForm(base, form, { a: '1' }, JSON_MODE)
      const spam = await postForm(base, form, { a: '2', _gotcha: 'http://spam.example' }, JSON_MODE)
      expect(spam.status).toBe(real.status)
      expect(Object.keys(spam.json())).toEqual(['id'])
      expect(spam.json().id).toMatch(/^submission_/)
      const html = await postForm(base, form, { a: '3', _gotcha: 'x' }, BROWSER)
      expect(html.status).toBe(200)
      expect(html.body).toBe((await postForm(base, form, { a: '4' }, BROWSER)).body)

      const { data, meta } = await listed(form)
      expect(meta.total).toBe(2)
      expect(data.map((item) => item.data)).toEqual(expect.arrayContaining([{ a: '1' }, { a: '4' }]))
      const counts = await createFormCounts(ctx.database.db)([form])
      expect(counts.get(form)).toEqual({ total: 2, unread: 2 })
      expect(await ctx.services.intake.spamCount(form)).toBe(2)
    })
  })

  describe('CORS', () => {
    it('answers a preflight from an allowed origin with 204 and the methods and headers', async () => {
      const answer = await send(base, 'OPTIONS', `/f/${guarded}`, {
        origin: 'https://www.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      })
      expect(answer.status).toBe(204)
      expect(answer.headers['access-control-allow-origin']).toBe('https://www.example.com')
      expect(answer.headers['access-control-allow-methods']).toBe('POST')
      expect(answer.headers['access-control-allow-headers']).toMatch(/content-type/)
      expect(answer.headers['access-control-allow-headers']).toMatch(/accept/)
      expect(answer.headers.vary).toMatch(/Origin/)
    })

    it('refuses a preflight from another origin without allowing it', async () => {
      const answer = await send(base, 'OPTIONS', `/f/${guarded}`, { origin: 'https://evil.example' })
      expect(answer.status).toBe(403)
      expect(answer.headers['access-control-allow-origin']).toBeUndefined()
    })

    it('lets a page of an allowed origin read every JSON answer, errors included', async () => {
      const headers = { origin: 'https://www.example.com' }
      const ok = await postJson(base, guarded, { a: '1' }, headers)
      const bad = await postJson(base, guarded, [1], headers)
      for (const answer of [ok, bad]) {
        expect(answer.headers['access-control-allow-origin']).toBe('https://www.example.com')
        expect(answer.headers.vary).toMatch(/Origin/)
      }
      expect([ok.status, bad.status]).toEqual([201, 422])
    })

    it('judges by the Referer when there is no Origin', async () => {
      const answer = await postJson(base, guarded, { a: '1' }, { referer: 'https://evil.example/page' })
      expect(answer.status).toBe(403)
    })
  })
})

describe('GET /api/v1/forms/{id}', () => {
  let ctx: TestContext
  let base: string
  let auth: string

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, publicUrl: 'https://forms.example.com' })
    base = await listen(ctx.app)
    auth = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  it('describes a form, its fields and where to post, from PUBLIC_URL', async () => {
    const id = await intakeForm(
      ctx,
      { fields: FIELDS.slice(0, 3) },
      { title: 'Contact', description: 'Say hi' },
    )
    const answer = await send(base, 'GET', `/api/v1/forms/${id}`, { authorization: auth })
    expect(answer.status).toBe(200)
    expect(answer.json()).toEqual({
      data: {
        id,
        title: 'Contact',
        description: 'Say hi',
        fields: [
          { name: 'email', label: 'email', type: 'email', required: true, options: null, maxLength: null },
          { name: 'age', label: 'age', type: 'number', required: false, options: null, maxLength: null },
          {
            name: 'topic',
            label: 'topic',
            type: 'select',
            required: false,
            options: ['sales', 'support'],
            maxLength: null,
          },
        ],
        intake: { enabled: true, url: `https://forms.example.com/f/${id}` },
      },
    })
  })

  it('shows a form never set up for intake as disabled with no fields', async () => {
    const { id } = await buildForm(ctx.database.db)
    const answer = await send(base, 'GET', `/api/v1/forms/${id}`, { authorization: auth })
    expect(answer.json().data).toMatchObject({ fields: [], intake: { enabled: false } })
  })

  it('answers 404 resource_not_found for an unknown form', async () => {
    const answer = await send(base, 'GET', '/api/v1/forms/form_missing', { authorization: auth })
    expect(answer.status).toBe(404)
    expect(answer.json()).toEqual({ error: 'resource_not_found', message: "Form 'form_missing' not found" })
  })

  it('refuses a key without forms:read', async () => {
    const viewer = (await buildApiKey(ctx.database.db, { role: 'viewer' })).authorization
    const { id } = await buildForm(ctx.database.db)
    const answer = await send(base, 'GET', `/api/v1/forms/${id}`, { authorization: viewer })
    expect(answer.status).toBe(403)
  })

  it("takes the address from the request's origin without PUBLIC_URL", async () => {
    const other = await createTestContext(GENEROUS_LIMITS)
    try {
      const otherBase = await listen(other.app)
      const key = (await buildApiKey(other.database.db)).authorization
      const { id } = await buildForm(other.database.db)
      const answer = await send(otherBase, 'GET', `/api/v1/forms/${id}`, { authorization: key })
      expect((answer.json().data as { intake: { url: string } }).intake.url).toBe(`${otherBase}/f/${id}`)
    } finally {
      await other.close()
    }
  })
})
