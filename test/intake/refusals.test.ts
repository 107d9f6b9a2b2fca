import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { FORM, type HttpAnswer, intakeForm, listen, multipart, send } from './support.js'

const JSON_MODE = { accept: 'application/json' }
const HTML_MODE = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }
const MODES = [
  ['JSON', JSON_MODE],
  ['HTML', HTML_MODE],
] as const

/** A post that breaks one row of the error table, made against the forms of `forms`. */
interface Row {
  name: string
  status: number
  error: string
  post: (forms: Forms, headers: Record<string, string>) => Promise<HttpAnswer>
  /** In HTML mode, the page names this. */
  says: RegExp
}

interface Forms {
  base: string
  open: string
  disabled: string
  inactive: string
  guarded: string
  ruled: string
}

const urlencoded = (forms: Forms, formId: string, body: string, headers: Record<string, string>) =>
  send(forms.base, 'POST', `/f/${formId}`, { 'content-type': FORM, ...headers }, body)

const ROWS: Row[] = [
  {
    name: 'an unknown form',
    status: 404,
    error: 'resource_not_found',
    post: (f, h) => urlencoded(f, 'form_missing', 'a=1', h),
    says: /not taking submissions/,
  },
  {
    name: 'a form whose intake is off',
    status: 404,
    error: 'resource_not_found',
    post: (f, h) => urlencoded(f, f.disabled, 'a=1', h),
    says: /not taking submissions/,
  },
  {
    name: 'an inactive form',
    status: 404,
    error: 'resource_not_found',
    post: (f, h) => urlencoded(f, f.inactive, 'a=1', h),
    says: /not taking submissions/,
  },
  {
    name: 'an origin the form does not list',
    status: 403,
    error: 'origin_not_allowed',
    post: (f, h) => urlencoded(f, f.guarded, 'a=1', { ...h, origin: 'https://evil.example' }),
    says: /may not post/,
  },
  {
    // The Referer the HTML mode sends names an allowed page, but the Origin decides.
    name: "a hidden origin ('Origin: null') to a form that lists origins",
    status: 403,
    error: 'origin_not_allowed',
    post: (f, h) => urlencoded(f, f.guarded, 'a=1', { ...h, origin: 'null' }),
    says: /may not post/,
  },
  {
    name: 'a body over 64 KiB',
    status: 413,
    error: 'payload_too_large',
    post: (f, h) => urlencoded(f, f.open, `a=${'x'.repeat(70_000)}`, h),
    says: /over 65536 bytes/,
  },
  {
    name: 'another content type',
    status: 415,
    error: 'unsupported_media_type',
    post: (f, h) => send(f.base, 'POST', `/f/${f.open}`, { 'content-type': 'text/plain', ...h }, 'a=1'),
    says: /Post application\/x-www-form-urlencoded/,
  },
  {
    name: 'a Content-Type that cannot be read',
    status: 415,
    error: 'unsupported_media_type',
    post: (f, h) => send(f.base, 'POST', `/f/${f.open}`, { 'content-type': 'garbage', ...h }, 'a=1'),
    says: /Post application\/x-www-form-urlencoded/,
  },
  {
    name: 'a multipart post with a file part',
    status: 415,
    error: 'unsupported_media_type',
    post: (f, h) => {
      const { contentType, body } = multipart([
        { name: 'a', value: '1' },
        { name: 'upload', value: 'file content', filename: 'notes.txt' },
      ])
      return send(f.base, 'POST', `/f/${f.open}`, { 'content-type': contentType, ...h }, body)
    },
    says: /only text fields/,
  },
  {
    name: 'a malformed body',
    status: 422,
    error: 'validation_failed',
    post: (f, h) => urlencoded(f, f.open, 'a=%E0%A4%A', h),
    says: /malformed/,
  },
  {
    name: 'over 100 fields',
    status: 422,
    error: 'validation_failed',
    post: (f, h) => urlencoded(f, f.open, Array.from({ length: 101 }, (_, i) => `f${i}=1`).join('&'), h),
    says: /over 100 fields/,
  },
  {
    name: 'a name over 100 characters',
    status: 422,
    error: 'validation_failed',
    post: (f, h) => urlencoded(f, f.open, `${'n'.repeat(101)}=1`, h),
    says: /name is over 100 characters/,
  },
  {
    name: 'a value over 10,000 characters',
    status: 422,
    error: 'validation_failed',
    post: (f, h) => urlencoded(f, f.open, `a=${'v'.repeat(10_001)}`, h),
    says: /over 10000 characters/,
  },
  {
    name: 'a broken field rule',
    status: 422,
    error: 'validation_failed',
    post: (f, h) => urlencoded(f, f.ruled, 'email=nope', h),
    says: /must be an email address/,
  },
]

describe('the error table of POST /f/{formId}', () => {
  let ctx: TestContext
  let forms: Forms

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 10_000 })
    const base = await listen(ctx.app)
    const { id: disabled } = await buildForm(ctx.database.db)
    forms = {
      base,
      disabled,
      open: await intakeForm(ctx),
      inactive: await intakeForm(ctx, {}, { active: false }),
      guarded: await intakeForm(ctx, { allowedOrigins: ['https://www.example.com'] }),
      ruled: await intakeForm(ctx, { fields: [{ name: 'email', type: 'email', required: true }] }),
    }
  })
  afterAll(() => ctx.close())

  for (const row of ROWS) {
    it(`answers ${row.name} with ${row.status} ${row.error} in JSON mode, in the envelope`, async () => {
      const answer = await row.post(forms, JSON_MODE)
      expect(answer.status).toBe(row.status)
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
      const body = answer.json()
      expect(body.error).toBe(row.error)
      expect(body.message).toEqual(expect.any(String))
      expect(Object.keys(body)).toEqual(
        row.error === 'validation_failed' ? ['error', 'message', 'fields'] : ['error', 'message'],
      )
    })

    it(`answers ${row.name} with ${row.status} and a page that says why and links back in HTML mode`, async () => {
      const answer = await row.post(forms, { ...HTML_MODE, referer: 'https://www.example.com/contact' })
      expect(answer.status).toBe(row.status)
      expect(answer.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(answer.body).toMatch(row.says)
      expect(answer.body).toContain('href="https://www.example.com/contact"')
    })
  }

  it('links back to the form in HTML mode also when the browser sent no Referer', async () => {
    const answer = await urlencoded(forms, forms.ruled, 'email=nope', HTML_MODE)
    expect(answer.status).toBe(422)
    expect(answer.body).toContain('<a href="javascript:history.back()">Go back to the form</a>')
  })

  it("takes a post with a hidden origin ('Origin: null') to a form that lists none, and shares no answer with it", async () => {
    const answer = await send(
      forms.base,
      'POST',
      `/f/${forms.open}`,
      { 'content-type': FORM, origin: 'null', ...JSON_MODE },
      'a=1',
    )
    expect(answer.status).toBe(201)
    expect(answer.headers['access-control-allow-origin']).toBeUndefined()
    expect(answer.headers.vary).toBe('Origin')
  })

  it('says an answer depends on Origin also when it refused the post before reading it', async () => {
    const answer = await send(
      forms.base,
      'POST',
      `/f/${forms.open}`,
      { 'content-type': 'garbage', origin: 'https://www.example.com', ...JSON_MODE },
      'a=1',
    )
    expect(answer.status).toBe(415)
    expect(answer.headers.vary).toBe('Origin')
  })

  it('names each broken field in JSON mode', async () => {
    const answer = await send(
      forms.base,
      'POST',
      `/f/${forms.ruled}`,
      { 'content-type': 'application/json' },
      JSON.stringify({ other: 1 }),
    )
    expect(answer.status).toBe(422)
    expect(answer.json()).toEqual({
      error: 'validation_failed',
      message: expect.any(String),
      fields: { email: 'is required' },
    })
  })

  it('refuses JSON that is not an object of strings, numbers, booleans or arrays of those', async () => {
    for (const body of ['{"a":', '[1,2]', '{"a":{"b":1}}', '{"a":null}']) {
      const answer = await send(
        forms.base,
        'POST',
        `/f/${forms.open}`,
        { 'content-type': 'application/json' },
        body,
      )
      expect(answer.status, body).toBe(422)
      expect(answer.json().error).toBe('validation_failed')
    }
  })

  it('names the field whose value is over 10,000 characters', async () => {
    const answer = await urlencoded(forms, forms.open, `short=1&long=${'v'.repeat(10_001)}`, JSON_MODE)
    expect(answer.json().fields).toEqual({ long: 'is over 10000 characters' })
  })

  it('does not count control fields toward the 100', async () => {
    const fields = Array.from({ length: 100 }, (_, i) => `f${i}=1`)
    const answer = await urlencoded(
      forms,
      forms.open,
      [...fields, '_gotcha=', '_next=%2F'].join('&'),
      JSON_MODE,
    )
    expect(answer.status).toBe(201)
  })

  for (const [mode, headers] of MODES) {
    it(`stores nothing it refused (${mode} mode)`, async () => {
      const form = await intakeForm(ctx, { fields: [{ name: 'email', type: 'email', required: true }] })
      await urlencoded(forms, form, 'email=nope', headers)
      await urlencoded(forms, form, `a=${'x'.repeat(70_000)}`, headers)
      const count = await ctx.database.db
        .selectFrom('submissions')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('form_id', '=', form)
        .executeTakeFirstOrThrow()
      expect(Number(count.n)).toBe(0)
    })
  }
})

describe('the error phrases of POST /f/{formId}', () => {
  let ctx: TestContext
  let base: string
  let open: string
  let guarded: string

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, errorStyle: 'phrase' })
    base = await listen(ctx.app)
    open = await intakeForm(ctx)
    guarded = await intakeForm(ctx, { allowedOrigins: ['https://www.example.com'] })
  })
  afterAll(() => ctx.close())

  it('says Origin not allowed, Payload too large, Unsupported media type and Validation failed', async () => {
    const post = (formId: string, type: string, body: string, headers: Record<string, string> = {}) =>
      send(base, 'POST', `/f/${formId}`, { 'content-type': type, ...JSON_MODE, ...headers }, body)
    const answers = await Promise.all([
      post(guarded, FORM, 'a=1', { origin: 'https://evil.example' }),
      post(open, FORM, `a=${'x'.repeat(70_000)}`),
      post(open, 'text/plain', 'a'),
      post(open, 'application/json', '{'),
    ])
    expect(answers.map((answer) => [answer.status, answer.json().error])).toEqual([
      [403, 'Origin not allowed'],
      [413, 'Payload too large'],
      [415, 'Unsupported media type'],
      [422, 'Validation failed'],
    ])
  })
})

/** The raw bytes a server answered on `socket`, once it has answered (or closed). */
function firstAnswer(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let received = ''
    const done = () => resolve(received)
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
      if (/\r\n\r\n/.test(received)) setTimeout(done, 50)
    })
    socket.on('close', done)
    socket.on('error', done)
  })
}

describe('bodies that are too large or cut off, over a raw socket', () => {
  let ctx: TestContext
  let port: number
  let open: string

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 10_000 })
    port = Number(new URL(await listen(ctx.app)).port)
    open = await intakeForm(ctx)
  })
  afterAll(() => ctx.close())

  const storedCount = async () => {
    const row = await ctx.database.db
      .selectFrom('submissions')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('form_id', '=', open)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  it('refuses a 10 MB body by its Content-Length with 413 before the body is sent', async () => {
    const socket = connect(port, '127.0.0.1')
    const answer = firstAnswer(socket)
    socket.write(
      `POST /f/${open} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nContent-Type: ${FORM}\r\nContent-Length: 10485760\r\n\r\na=`,
    )
    const text = await answer
    socket.destroy()
    expect(text).toMatch(/^HTTP\/1\.1 413 /)
    expect(text).toMatch(/connection: close/i)
    expect(text).toContain('"error":"payload_too_large"')
  })

  it('refuses a chunked 10 MB body with 413 once 64 KiB have arrived, without reading the rest', async () => {
    const socket = connect(port, '127.0.0.1')
    const answer = firstAnswer(socket)
    let answered = false
    void answer.then(() => {
      answered = true
    })
    socket.write(
      `POST /f/${open} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nContent-Type: ${FORM}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    )
    const chunk = `a=${'x'.repeat(16 * 1024 - 2)}`
    let sent = 0
    while (!answered && sent < 10 * 1024 * 1024 && !socket.destroyed) {
      const flushed = socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
      sent += chunk.length
      if (!flushed) await new Promise((resolve) => setTimeout(resolve, 5))
      else await new Promise((resolve) => setImmediate(resolve))
    }
    const text = await answer
    socket.destroy()
    expect(text).toMatch(/^HTTP\/1\.1 413 /)
    expect(sent).toBeLessThan(10 * 1024 * 1024)
    expect(await storedCount()).toBe(0)
  })

  it('keeps serving when a client goes away in the middle of its body, and stores nothing of it', async () => {
    const before = await storedCount()
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(
      `POST /f/${open} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nContent-Type: ${FORM}\r\nContent-Length: 1000\r\n\r\nname=Ada&mess`,
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.destroy()
    const next = await send(
      `http://127.0.0.1:${port}`,
      'POST',
      `/f/${open}`,
      { 'content-type': FORM, ...JSON_MODE },
      'a=1',
    )
    expect(next.status).toBe(201)
    expect(await storedCount()).toBe(before + 1)
  })
})
