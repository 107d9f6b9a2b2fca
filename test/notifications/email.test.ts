import { type AddressInfo, createServer } from 'node:net'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { listen, postForm, postJson } from '../intake/support.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { deliveries, events, openForm, testNotifier } from './support.js'

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
  it('ends an attempt at its deadline when the mail server answers too slowly to finish, and retries it', async () => {
    // A mail server that answers every command, each a little later: no step of the exchange times
    // out, while the whole takes several times the deadline.
    const tarpit = createServer((socket) => {
      const answer = (line: string) => setTimeout(() => socket.writable && socket.write(`${line}\r\n`), 400)
      let inData = false
      answer('220 slow.example ESMTP')
      socket.on('data', (chunk) => {
        for (const line of chunk.toString('latin1').split('\r\n').filter(Boolean)) {
          if (inData) {
            if (line === '.') {
              inData = false
              answer('250 queued')
            }
          } else if (/^DATA/i.test(line)) {
            inData = true
            answer('354 go on')
          } else if (/^QUIT/i.test(line)) answer('221 bye')
          else if (/^EHLO/i.test(line)) answer('250 slow.example')
          else answer('250 ok')
        }
      })
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => tarpit.listen(0, '127.0.0.1', () => resolve()))
    try {
      const form = await openForm(ctx, { notifyEmails: ['owner@example.com'] })
      const posted = (await postForm(base, form, { name: 'Ada' }, JSON_MODE)).json().id
      const notifier = testNotifier(ctx, {
        smtpUrl: `smtp://127.0.0.1:${(tarpit.address() as AddressInfo).port}`,
        mailFrom: 'forms@example.com',
        timeoutMs: 1_000,
      })
      expect(await notifier.drain()).toBe(1)
      await notifier.stop(0)
      const [row] = (await deliveries(ctx)).filter(
        (delivery) => delivery.channel === 'email' && delivery.status === 'pending',
      )
      expect(row).toMatchObject({ attempts: 1, last_status: 'timeout' })
      expect(row?.last_error).toContain('1000 ms')
      expect(
        JSON.parse((await events(ctx)).find((event) => event.id === row?.event_id)?.data ?? '{}').id,
      ).toBe(posted)
    } finally {
      tarpit.close()
      // Its retry is not for the tests after this one.
      await ctx.database.db.deleteFrom('notification_deliveries').where('status', '=', 'pending').execute()
    }
  })
})
