import type { AddressInfo } from 'node:net'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { listen, postForm, postJson } from '../intake/support.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { deliveries, openForm, testNotifier } from './support.js'

interface Received {
  mail: ParsedMail
  from: string
  to: string[]
}

const JSON_MODE = { accept: 'application/json' }
const FIELDS = [
  { name: 'name', label: 'Your name', type: 'text' },
  { name: 'email', label: 'Email', type: 'email' },
  { name: 'message', label: 'Message', type: 'textarea' },
]

describe('notification emails', () => {
  let ctx: TestContext
  let base: string
  let smtp: SMTPServer
  let smtpUrl: string
  const received: Received[] = []

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 1000 })
    base = await listen(ctx.app)
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream).then(
          (mail) => {
            received.push({
              mail,
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
            })
            callback()
          },
          (error: Error) => callback(error),
        )
      },
    })
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
    smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => smtp.close(() => resolve()))
    await ctx.close()
  })

  const mailer = () =>
    testNotifier(ctx, {
      smtpUrl,
      mailFrom: 'Lectern <forms@example.com>',
      publicUrl: 'https://forms.example.com',
    })

  it('mails each notified address once: the form in the subject, the fields in order, Reply-To the sender', async () => {
    const form = await openForm(
      ctx,
      { fields: FIELDS, notifyEmails: ['owner@example.com', 'team@example.com'] },
      'Contact us',
    )
    const posted = await postJson(
      base,
      form,
      { extra: 'kept', message: 'Hello\nthere', email: 'ada@example.com', name: 'Ada' },
      JSON_MODE,
    )
    const notifier = mailer()
    expect(await notifier.drain()).toBe(1)
    await notifier.stop()
    expect(received).toHaveLength(1)
    const [{ mail, to, from }] = received
    expect(from).toBe('forms@example.com')
    expect(to.sort()).toEqual(['owner@example.com', 'team@example.com'])
    expect(mail.subject).toBe('New submission: Contact us')
    expect(mail.replyTo?.value).toEqual([{ address: 'ada@example.com', name: '' }])
    const text = mail.text ?? ''
    const lines = text.split('\n')
    const at = (prefix: string) => lines.findIndex((line) => line.startsWith(prefix))
    expect(at('Your name: Ada')).toBeGreaterThan(0)
    expect(at('Email: ada@example.com')).toBe(at('Your name: Ada') + 1)
    expect(at('Message: Hello')).toBe(at('Email: ada@example.com') + 1)
    expect(lines[at('Message: Hello') + 1]).toBe('  there')
    expect(at('extra: kept')).toBe(at('Message: Hello') + 2)
    expect(text).toContain(`Submission: ${posted.json().id}`)
    expect(text).toContain(`https://forms.example.com/admin/forms/${form}/submissions`)
  })

  it('keeps injected line breaks out of every header: no added recipient or header', async () => {
    received.length = 0
    const form = await openForm(
      ctx,
      { fields: [{ name: 'contact', label: 'Contact', type: 'email' }], notifyEmails: ['owner@example.com'] },
      'Evil\r\nBcc: thief@example.com',
    )
    const posted = await postJson(
      base,
      form,
      {
        // Each passes the intake's address check, none is a safe single address.
        contact: 'x,thief@example.com',
        email: 'y@example.com>,Bcc:thief@example.com',
        note: 'line\r\nBcc: thief@example.com',
      },
      JSON_MODE,
    )
    expect(posted.status).toBe(201)
    const notifier = mailer()
    await notifier.drain()
    await notifier.stop()
    expect(received).toHaveLength(1)
    const [{ mail, to }] = received
    expect(to).toEqual(['owner@example.com'])
    expect(mail.headers.has('bcc')).toBe(false)
    expect(mail.replyTo).toBeUndefined()
    expect(mail.subject).toBe('New submission: Evil Bcc: thief@example.com')
  })

  it('mails nothing for spam', async () => {
    received.length = 0
    const form = await openForm(ctx, { notifyEmails: ['owner@example.com'] })
    await postForm(base, form, { name: 'bot', _gotcha: 'filled' }, JSON_MODE)
    const notifier = mailer()
    expect(await notifier.drain()).toBe(0)
    await notifier.stop()
    expect(received).toHaveLength(0)
  })

  it('sends nothing without SMTP settings, and records why', async () => {
    received.length = 0
    const form = await openForm(ctx, { notifyEmails: ['owner@example.com'] })
    await postForm(base, form, { name: 'Ada' }, JSON_MODE)
    const notifier = testNotifier(ctx)
    expect(await notifier.drain()).toBe(1)
    await notifier.stop()
    expect(received).toHaveLength(0)
    const rows = (await deliveries(ctx)).filter((row) => row.channel === 'email' && row.status === 'failed')
    expect(rows.map((row) => row.last_status)).toEqual(['mail_not_configured'])
  })
})
