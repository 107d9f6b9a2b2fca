import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import type { IntakeSettings } from '../../src/resources/form.js'
import { buildApiKey, buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { intakeForm, listen, postForm } from '../intake/support.js'
import { GENEROUS_LIMITS, request } from '../security-suite.js'
import { type DashboardClient, rowText, signedInClient, textOf } from './support.js'

/** The field editor's rows as its form posts them. */
function rowsBody(
  rows: {
    name?: string
    label?: string
    type?: string
    required?: boolean
    options?: string
    maxLength?: string
  }[],
  op = 'save',
): Record<string, string> {
  const body: Record<string, string> = { count: String(rows.length), op }
  rows.forEach((row, index) => {
    body[`name-${index}`] = row.name ?? ''
    body[`label-${index}`] = row.label ?? ''
    body[`type-${index}`] = row.type ?? 'text'
    body[`options-${index}`] = row.options ?? ''
    body[`maxLength-${index}`] = row.maxLength ?? ''
    if (row.required) body[`required-${index}`] = 'true'
  })
  return body
}

/** The names of the rows an editor page shows, in order. */
const rowNames = (body: string) =>
  [...body.matchAll(/name="name-\d+" value="([^"]*)"/g)].map((match) => match[1])

/** The text of the `<code>` block with HTML id `id`, unescaped once: the code as a person copies it. */
function codeText(body: string, id: string): string {
  const match = new RegExp(`<code id="${id}">([\\s\\S]*?)</code>`).exec(body)
  if (!match) throw new Error(`no code block ${id}`)
  return (match[1] as string)
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
}

describe('a form’s intake in the dashboard', () => {
  let ctx: TestContext
  let app: FastifyInstance
  let admin: DashboardClient
  let key: string

  const settingsOf = async (formId: string): Promise<IntakeSettings> => {
    const found = await ctx.services.intake.form(formId)
    if (found === null) throw new Error('no such form')
    return found.settings
  }
  const lastAudit = async () => (await ctx.services.audit.recent(1))[0]

  beforeAll(async () => {
    ctx = await createTestContext({ ...GENEROUS_LIMITS, intakePerMinute: 10_000 })
    app = ctx.app
    admin = (await signedInClient(app, ctx.database.db)).client
    key = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  it('saves the fields typed in rows, in their order, leaving the blank row out; the API and the audit log follow', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Contact' })
    const editor = await admin.get(`/admin/forms/${form.id}/fields`)
    expect(editor.statusCode).toBe(200)
    expect(rowNames(editor.body)).toEqual([''])

    const res = await admin.post(
      `/admin/forms/${form.id}/fields`,
      rowsBody([
        { name: 'email', label: 'Your email', type: 'email', required: true, maxLength: '120' },
        { name: 'topic', label: 'Topic', type: 'select', options: 'Sales\n\n Support \n' },
        {},
        { name: 'message', type: 'textarea' },
      ]),
    )
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/admin/forms/${form.id}/fields`)
    const page = await admin.get(`/admin/forms/${form.id}/fields`)
    expect(textOf(page)).toContain('Fields of “Contact” saved: 3 fields.')
    expect(rowNames(page.body)).toEqual(['email', 'topic', 'message', ''])

    const api = await request(app, `/api/v1/forms/${form.id}`, key)
    expect(api.json().data.fields).toEqual([
      { name: 'email', label: 'Your email', type: 'email', required: true, options: null, maxLength: 120 },
      {
        name: 'topic',
        label: 'Topic',
        type: 'select',
        required: false,
        options: ['Sales', 'Support'],
        maxLength: null,
      },
      {
        name: 'message',
        label: 'message',
        type: 'textarea',
        required: false,
        options: null,
        maxLength: null,
      },
    ])
    expect(await lastAudit()).toMatchObject({
      action: 'form.intake_changed',
      target: form.id,
      detail: { changed: ['fields'], enabled: false },
    })
  })

  it('refuses bad fields with the importer’s words beside each row, keeping what was typed and storing nothing', async () => {
    const form = await buildForm(ctx.database.db)
    await ctx.services.intake.updateSettings(form.id, { fields: [{ name: 'kept', type: 'text' }] })
    const res = await admin.post(
      `/admin/forms/${form.id}/fields`,
      rowsBody([
        { name: '_secret', label: 'Secret' },
        {},
        { name: 'topic', type: 'select' },
        { name: 'age', type: 'number', maxLength: 'ten', options: 'one' },
        { name: 'email', type: 'email' },
        { name: 'email', type: 'text' },
      ]),
    )
    expect(res.statusCode).toBe(422)
    const text = textOf(res)
    expect(text).toContain('There are 5 problems')
    expect(text).toContain('Field 1, name: must not begin with _')
    expect(text).toContain('Field 3, options: must be an array of 1 to 200 strings for a select')
    expect(text).toContain('Field 4, options: is only for a select')
    expect(text).toContain('Field 4, max length: must be an integer from 1 to 10000, or null')
    expect(text).toContain("Field 6, name: 'email' is defined twice")
    // Beside its input, tied to it for screen readers.
    expect(res.body).toMatch(
      /<p class="field-problem" id="row-0-name-problem">Must not begin with _[^<]*<\/p><input id="row-0-name" name="name-0" value="_secret"[^>]*aria-describedby="row-0-name-hint row-0-name-problem" aria-invalid="true">/,
    )
    expect(res.body).toContain('id="row-3-maxLength-problem"')
    expect(rowNames(res.body)).toEqual(['_secret', '', 'topic', 'age', 'email', 'email'])
    expect((await settingsOf(form.id)).fields.map((field) => field.name)).toEqual(['kept'])
  })

  it('moves, removes and adds rows without a script, saving nothing until Save fields is pressed', async () => {
    const form = await buildForm(ctx.database.db)
    const rows = [{ name: 'a' }, { name: 'b' }, { name: 'c' }, {}]
    const moved = await admin.post(`/admin/forms/${form.id}/fields`, rowsBody(rows, 'up-1'))
    expect(moved.statusCode).toBe(200)
    expect(rowNames(moved.body)).toEqual(['b', 'a', 'c', ''])
    expect(textOf(moved)).toContain('The field b was moved up. Nothing is saved until you press Save fields.')
    const down = await admin.post(`/admin/forms/${form.id}/fields`, rowsBody(rows, 'down-0'))
    expect(rowNames(down.body)).toEqual(['b', 'a', 'c', ''])
    const removed = await admin.post(`/admin/forms/${form.id}/fields`, rowsBody(rows, 'remove-2'))
    expect(rowNames(removed.body)).toEqual(['a', 'b', ''])
    const added = await admin.post(`/admin/forms/${form.id}/fields`, rowsBody(rows, 'add'))
    expect(rowNames(added.body)).toEqual(['a', 'b', 'c', '', ''])
    // The first row cannot move up, nor the last down.
    expect(moved.body).toMatch(/value="up-0"[^>]*disabled/)
    expect(moved.body).toMatch(/value="down-3"[^>]*disabled/)
    expect((await settingsOf(form.id)).fields).toEqual([])
  })

  it('saves intake settings, and refuses bad ones beside their inputs with every problem at once', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Newsletter' })
    await ctx.services.intake.updateSettings(form.id, { fields: [{ name: 'email', type: 'email' }] })
    const page = await admin.get(`/admin/forms/${form.id}/intake`)
    expect(page.statusCode).toBe(200)
    const bad = await admin.post(`/admin/forms/${form.id}/intake`, {
      enabled: 'true',
      allowedOrigins: 'https://www.example.com\nhttps://shop.example.com/basket',
      redirectUrl: 'javascript:alert(1)',
      storeIpAddress: 'true',
      retentionDays: '0',
      notifyEmails: 'office@example.com\nnot an address',
    })
    expect(bad.statusCode).toBe(422)
    const text = textOf(bad)
    expect(text).toContain('There are 4 problems')
    expect(text).toContain(
      'Allowed origins: line 2 must be an origin such as https://www.example.com, with no path',
    )
    expect(text).toContain('After sending, go to: must be an absolute http(s) URL or a path starting with /')
    expect(text).toContain('Delete submissions after: must be an integer from 1 to 36500')
    expect(text).toContain('Email each new submission to: line 2 must be one plain email address')
    expect(bad.body).toContain('id="field-allowedOrigins-problem"')
    expect(bad.body).toContain('https://shop.example.com/basket</textarea>')
    expect(await settingsOf(form.id)).toMatchObject({ enabled: false, allowedOrigins: [] })

    const words = await admin.post(`/admin/forms/${form.id}/intake`, { retentionDays: 'two weeks' })
    expect(words.statusCode).toBe(422)
    expect(textOf(words)).toContain('Must be a whole number of days, or empty to keep submissions.')

    const good = await admin.post(`/admin/forms/${form.id}/intake`, {
      enabled: 'true',
      allowedOrigins: ' https://www.example.com \n\n',
      redirectUrl: '/thanks',
      retentionDays: '90',
      notifyEmails: 'office@example.com',
    })
    expect(good.statusCode).toBe(303)
    expect(textOf(await admin.get(`/admin/forms/${form.id}/intake`))).toContain(
      'Intake settings of “Newsletter” saved.',
    )
    expect(await settingsOf(form.id)).toEqual({
      enabled: true,
      allowedOrigins: ['https://www.example.com'],
      redirectUrl: '/thanks',
      storeIpAddress: false,
      retentionDays: 90,
      notifyEmails: ['office@example.com'],
      // The fields are another tab's: saving the settings keeps them.
      fields: [
        { name: 'email', label: 'email', type: 'email', required: false, options: null, maxLength: null },
      ],
    })
    expect(await lastAudit()).toMatchObject({
      action: 'form.intake_changed',
      target: form.id,
      detail: {
        changed: [
          'enabled',
          'allowedOrigins',
          'redirectUrl',
          'storeIpAddress',
          'retentionDays',
          'notifyEmails',
        ],
        enabled: true,
      },
    })
  })

  it('names days that are not a whole number together with every other setting’s problem in one save, storing nothing', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Survey' })
    const auditBefore = await lastAudit()
    const bad = await admin.post(`/admin/forms/${form.id}/intake`, {
      enabled: 'true',
      allowedOrigins: 'https://www.example.com/contact',
      redirectUrl: 'javascript:alert(1)',
      retentionDays: 'two <b>weeks</b>',
      notifyEmails: 'not an address',
    })
    expect(bad.statusCode).toBe(422)
    const summary = /class="alert error"[\s\S]*?<ul>([\s\S]*?)<\/ul>/.exec(bad.body)?.[1] ?? ''
    // In the order of the page, and the days in the editor's words, not the schema's.
    expect([...summary.matchAll(/<li>(.*?)<\/li>/g)].map((match) => match[1])).toEqual([
      'Allowed origins: line 1 must be an origin such as https://www.example.com, with no path (got &quot;https://www.example.com/contact&quot;)',
      'After sending, go to: must be an absolute http(s) URL or a path starting with / (got &quot;javascript:alert(1)&quot;)',
      'Delete submissions after: must be a whole number of days, or empty',
      'Email each new submission to: line 1 must be one plain email address such as owner@example.com (got &quot;not an address&quot;)',
    ])
    expect(textOf(bad)).toContain('There are 4 problems')
    for (const member of ['allowedOrigins', 'redirectUrl', 'retentionDays', 'notifyEmails'])
      expect(bad.body).toContain(`id="field-${member}-problem"`)
    expect(textOf(bad)).toContain('Must be a whole number of days, or empty to keep submissions.')
    expect(bad.body).toContain('value="two &lt;b&gt;weeks&lt;/b&gt;"')
    expect(await settingsOf(form.id)).toMatchObject({
      enabled: false,
      allowedOrigins: [],
      retentionDays: null,
    })
    expect(await lastAudit()).toEqual(auditBefore)

    // With every other setting good, the days alone still keep the whole save from being stored.
    const alone = await admin.post(`/admin/forms/${form.id}/intake`, {
      enabled: 'true',
      allowedOrigins: 'https://www.example.com',
      retentionDays: '1.5',
    })
    expect(alone.statusCode).toBe(422)
    expect(textOf(alone)).toContain(
      'There is a problem Delete submissions after: must be a whole number of days',
    )
    expect(await settingsOf(form.id)).toMatchObject({
      enabled: false,
      allowedOrigins: [],
      retentionDays: null,
    })
    expect(await lastAudit()).toEqual(auditBefore)
  })

  it('explains what keeping IP addresses and deleting after some days mean, and says when no mail is sent', async () => {
    const form = await buildForm(ctx.database.db)
    const text = textOf(await admin.get(`/admin/forms/${form.id}/intake`))
    expect(text).toContain(
      'Useful to trace abuse, but personal data: untick it to store neither with new submissions.',
    )
    expect(text).toContain('Submissions older than this are deleted automatically within the hour')
    expect(text).toContain(
      'No mail is sent: this server has no outgoing mail configured ( SMTP_URL and MAIL_FROM ).',
    )

    // The same database served with mail configured and a public address.
    const mailing = await buildApp({
      config: {
        ERROR_STYLE: 'code',
        LOG_LEVEL: 'silent',
        SMTP_URL: 'smtp://mailer:secret@127.0.0.1:2525',
        MAIL_FROM: 'Lectern <forms@example.com>',
        PUBLIC_URL: 'https://forms.example.com/',
      },
      services: ctx.services,
      limiter: ctx.limiter,
      database: ctx.database,
    })
    try {
      const { client } = await signedInClient(mailing, ctx.database.db)
      const served = await client.get(`/admin/forms/${form.id}/intake`)
      expect(served.statusCode).toBe(200)
      expect(textOf(served)).not.toContain('No mail is sent')
      expect(served.body).not.toContain('secret')
      const embed = await client.get(`/admin/forms/${form.id}/embed`)
      expect(codeText(embed.body, 'embed-html')).toContain(`action="https://forms.example.com/f/${form.id}"`)
    } finally {
      await mailing.close()
    }
  })

  it('lets only the roles that edit forms see and change their fields, intake and embed code', async () => {
    const form = await buildForm(ctx.database.db)
    const editor = (await signedInClient(app, ctx.database.db, 'editor')).client
    const viewer = (await signedInClient(app, ctx.database.db, 'viewer')).client
    for (const tab of ['fields', 'intake', 'embed']) {
      expect((await editor.get(`/admin/forms/${form.id}/${tab}`)).statusCode).toBe(200)
      expect((await viewer.get(`/admin/forms/${form.id}/${tab}`)).statusCode).toBe(403)
    }
    const refused = await viewer.post(`/admin/forms/${form.id}/fields`, rowsBody([{ name: 'sneaky' }]))
    expect(refused.statusCode).toBe(403)
    const refusedSettings = await viewer.post(`/admin/forms/${form.id}/intake`, { enabled: 'true' })
    expect(refusedSettings.statusCode).toBe(403)
    expect(await settingsOf(form.id)).toMatchObject({ enabled: false, fields: [] })

    const saved = await editor.post(`/admin/forms/${form.id}/intake`, {
      enabled: 'true',
      storeIpAddress: 'true',
    })
    expect(saved.statusCode).toBe(303)
    expect((await settingsOf(form.id)).enabled).toBe(true)
    expect(await lastAudit()).toMatchObject({
      action: 'form.intake_changed',
      actor: expect.stringMatching(/@/),
    })
    // Submissions hold personal data: an editor has no Spam view, and no tab for it.
    expect((await editor.get(`/admin/forms/${form.id}/spam`)).statusCode).toBe(403)
    expect(textOf(await editor.get(`/admin/forms/${form.id}/edit`))).not.toMatch(/\bSpam\b/)
  })

  it('gives embed code that posts each defined field and hides the honeypot, with every value escaped', async () => {
    const hostile = '<script>alert("title")</script>'
    const form = await buildForm(ctx.database.db, { title: hostile })
    await ctx.services.intake.updateSettings(form.id, {
      enabled: true,
      fields: [
        { name: 'email', label: 'Your <b>email</b>', type: 'email', required: true, maxLength: 120 },
        { name: 'message', label: 'Message', type: 'textarea', maxLength: 2000 },
        { name: 'plan', label: 'Plan', type: 'select', options: ['Basic', '"><img src=x onerror=alert(1)>'] },
        { name: 'age', label: 'Age', type: 'number' },
        { name: 'news', label: 'Send me news', type: 'checkbox' },
      ],
    })
    const page = await admin.get(`/admin/forms/${form.id}/embed`, { host: 'cms.example.org' })
    expect(page.statusCode).toBe(200)
    // Nothing hostile reaches the dashboard as markup.
    expect(page.body).not.toContain('<script>alert')
    expect(page.body).not.toContain('<img src=x')
    expect(page.body).not.toContain('<b>email')

    const snippet = codeText(page.body, 'embed-html')
    // ...nor the site's page, once pasted.
    expect(snippet).not.toContain('<script>')
    expect(snippet).not.toContain('<img')
    expect(snippet).toContain('&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt;')
    expect(snippet).toContain(
      `<form id="lectern-${form.id}" action="http://cms.example.org/f/${form.id}" method="post">`,
    )
    expect(snippet).toContain('<label for="lectern-')
    expect(snippet).toContain('>Your &lt;b&gt;email&lt;/b&gt;</label>')
    expect(snippet).toMatch(/<input id="[^"]+" name="email" type="email" required maxlength="120">/)
    expect(snippet).toMatch(/<textarea id="[^"]+" name="message" rows="5" maxlength="2000"><\/textarea>/)
    expect(snippet).toContain('<option>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</option>')
    expect(snippet).toMatch(/<input id="[^"]+" name="age" type="number" step="any">/)
    expect(snippet).toMatch(/<input id="[^"]+" name="news" type="checkbox" value="yes">/)
    // The honeypot: off-screen, out of the accessibility tree, out of the tab order, never autofilled.
    expect(snippet).toMatch(
      /<div aria-hidden="true" style="position:absolute;left:-10000px;[^"]*">\s*<label[^>]*>Leave this empty<\/label>\s*<input id="[^"]+" name="_gotcha" type="text" tabindex="-1" autocomplete="off">/,
    )
    expect(snippet).toContain('<button type="submit">Send</button>')
    // Every field in the form's order.
    expect([...snippet.matchAll(/ name="([^"]+)"/g)].map((match) => match[1])).toEqual([
      'email',
      'message',
      'plan',
      'age',
      'news',
      '_gotcha',
    ])

    const script = codeText(page.body, 'embed-fetch')
    expect(script).toContain(`document.getElementById('lectern-${form.id}')`)
    expect(script).toContain("accept: 'application/json'")
    expect(page.body).toContain('data-copy-target="embed-html"')
  })

  it('lists a form’s spam; “Not spam” moves one into the inbox and the API, and Delete erases one, both audited', async () => {
    const base = await listen(app)
    const form = await intakeForm(ctx, { fields: [{ name: 'email', type: 'email' }] })
    for (const email of ['bot@example.com', 'person@example.com'])
      expect((await postForm(base, form, { email, _gotcha: 'http://spam.example' })).status).toBe(200)
    expect(await ctx.services.intake.spamCount(form)).toBe(2)

    const view = await admin.get(`/admin/forms/${form}/spam`)
    expect(view.statusCode).toBe(200)
    expect(textOf(view)).toContain('2 caught posts, newest first.')
    const ids = [...view.body.matchAll(/<article class="submission" id="spam-([^"]+)"/g)].map(
      (match) => match[1] as string,
    )
    expect(ids).toHaveLength(2)
    const person = ids.find((id) => rowText(view, `spam-${id}`).includes('person@example.com')) as string
    const bot = ids.find((id) => id !== person) as string
    const caught = (await ctx.services.spam.list(form, 1, 10)).items.find((item) => item.id === person)

    // An editor reads no submissions, and so releases no spam.
    const editor = (await signedInClient(app, ctx.database.db, 'editor')).client
    expect((await editor.post(`/admin/spam/${person}/not-spam`)).statusCode).toBe(403)

    await admin.get(`/admin/forms/${form}/spam`)
    const released = await admin.post(`/admin/spam/${person}/not-spam`)
    expect(released.statusCode).toBe(303)
    expect(released.headers.location).toBe(`/admin/forms/${form}/spam`)
    expect(textOf(await admin.get(`/admin/forms/${form}/spam`))).toContain(
      'Moved to the inbox as an unread submission.',
    )
    expect(await lastAudit()).toMatchObject({
      action: 'spam.released',
      target: person,
      detail: { formId: form },
    })
    const listed = (await request(app, `/api/v1/forms/${form}/submissions`, key)).json()
    expect(listed.data).toEqual([
      expect.objectContaining({
        id: person,
        data: { email: 'person@example.com' },
        isRead: false,
        // When it arrived, not when it was released.
        createdAt: caught?.createdAt,
      }),
    ])
    // The form's counts (kept by the database's triggers) include it.
    const forms = await admin.get('/admin/forms?size=100')
    expect(forms.body).toContain(`aria-label="1 unread submissions to Contact us"`)
    expect(await ctx.services.intake.spamCount(form)).toBe(1)

    await admin.get(`/admin/forms/${form}/spam`)
    expect((await admin.post(`/admin/spam/${bot}/delete`)).statusCode).toBe(303)
    expect(await lastAudit()).toMatchObject({ action: 'spam.deleted', target: bot, detail: { formId: form } })
    expect(textOf(await admin.get(`/admin/forms/${form}/spam`))).toContain('No spam')
    expect(await ctx.services.intake.spamCount(form)).toBe(0)
    // Handled twice (another tab): said plainly, not a crash.
    const again = await admin.post(`/admin/spam/${bot}/delete`)
    expect(again.statusCode).toBe(404)
    expect(textOf(again)).toContain('That spam is no longer kept')
  })

  it('shows the defined fields as the inbox table’s columns, in their order, then the others', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Columns' })
    await ctx.services.intake.updateSettings(form.id, {
      fields: [
        { name: 'email', label: 'Email <address>', type: 'email' },
        { name: 'name', label: 'Name', type: 'text' },
      ],
    })
    await buildSubmission(ctx.database.db, {
      formId: form.id,
      id: 'submission_columns1',
      data: { name: 'Ada', extra: 'kept', email: 'ada@example.com' },
    })
    await buildSubmission(ctx.database.db, {
      formId: form.id,
      id: 'submission_columns2',
      data: { email: 'b@example.com' },
    })
    const page = await admin.get(`/admin/forms/${form.id}/submissions?view=table`)
    const headers = [...page.body.matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((match) => match[1])
    expect(headers).toEqual([
      'Select',
      'Received',
      'Email &lt;address&gt;',
      'Name',
      'Other data',
      'Status',
      'Notes',
      'Actions',
    ])
    expect(rowText(page, 'submission-submission_columns1')).toMatch(/ada@example\.com Ada extra: kept Unread/)
    expect(rowText(page, 'submission-submission_columns2')).toMatch(/b@example\.com — None — Unread/)
  })
})
