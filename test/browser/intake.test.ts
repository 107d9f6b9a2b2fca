import { existsSync, mkdirSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NO_LISTENERS } from '../../src/services/notifications/outbox.js'
import { createTestContext, type TestContext } from '../harness.js'

/**
 * A form's intake from end to end in Debian's Chromium: set up in the dashboard, its embed code
 * pasted into a page of another site (another origin), filled in and sent as a plain form and as
 * JSON, then read in the API and the inbox. Skipped without Chromium unless CI is set.
 */
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-sync']
const SCREENSHOTS = new URL('../../test-results/', import.meta.url)
const available = existsSync(CHROMIUM)

const ADMIN = { email: 'grace@example.com', password: 'compiler cobol 1959' }

/** A site of its own on another port: `/` serves `pages['/']` as it is then, and so on; else a 404. */
async function serveSite(pages: Readonly<Record<string, string>>): Promise<{ base: string; server: Server }> {
  const server = createServer((request, response) => {
    const page = pages[(request.url ?? '/').split('?')[0] as string]
    response.writeHead(page === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(page ?? 'Not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { base: `http://localhost:${(server.address() as AddressInfo).port}`, server }
}

const sitePage = (body: string) =>
  `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Contact</title></head>\n<body>\n<h1>Write to us</h1>\n${body}\n</body>\n</html>\n`

describe.skipIf(!available && !process.env.CI)('a form taking submissions from another site', () => {
  let browser: Browser
  let ctx: TestContext
  let base: string
  const errors: string[] = []

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    ctx = await createTestContext({ perHour: 1_000_000, perSecond: 1_000_000, intakePerMinute: 1000 })
    await ctx.services.users.createUser({ ...ADMIN, role: 'global_admin' })
    base = await ctx.app.listen({ port: 0, host: '127.0.0.1' })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await ctx?.close()
  })

  const newContext = async (): Promise<BrowserContext> => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 760 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    context.on('page', (page) => {
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
          errors.push(message.text())
      })
      page.on('pageerror', (error) => errors.push(error.message))
    })
    return context
  }
  /** A tab of the form's page. */
  const tab = (page: Page, name: string) =>
    page.getByRole('navigation', { name: 'This form' }).getByRole('link', { name, exact: true })
  const screenshot = (page: Page, name: string) =>
    page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname })

  it('is set up in the dashboard, embedded in another site, filled in as HTML and as JSON, and read in the API and the inbox', async () => {
    const form = await ctx.services.contentAdmin.createForm(
      { title: 'Write to us', description: 'The contact form of the shop', isActive: true },
      'cli',
    )
    const context = await newContext()
    const admin = await context.newPage()
    await admin.goto(`${base}/admin/login`)
    await admin.getByLabel('Email').fill(ADMIN.email)
    await admin.getByLabel('Password').fill(ADMIN.password)
    await admin.getByRole('button', { name: 'Sign in' }).click()
    await admin.waitForURL(/\/admin$/)

    // The fields, typed row by row with no script needed: a new row each time, then save.
    await admin.goto(`${base}/admin/forms/${form.id}/edit`)
    await tab(admin, 'Fields').click()
    await admin.locator('#row-0-name').fill('email')
    await admin.locator('#row-0-label').fill('Your email')
    await admin.locator('#row-0-type').selectOption('email')
    await admin.locator('#row-0-required').check()
    await admin.getByRole('button', { name: 'Add another field' }).click()
    await admin.locator('#row-1-name').fill('topic')
    await admin.locator('#row-1-label').fill('Topic')
    await admin.locator('#row-1-type').selectOption('select')
    await admin.locator('#row-1-options').fill('Orders\nReturns')
    await admin.getByRole('button', { name: 'Add another field' }).click()
    await admin.locator('#row-2-name').fill('message')
    await admin.locator('#row-2-label').fill('Message')
    await admin.locator('#row-2-type').selectOption('textarea')
    await admin.locator('#row-2-maxLength').fill('2000')
    // The message belongs before the topic.
    // (Its buttons were named when the page was drawn, for a new field.)
    await admin.locator('#row-2').getByRole('button', { name: 'Move up the new field' }).click()
    await expect
      .poll(() => admin.locator('main .alert.warning').textContent())
      .toContain('The field message was moved up.')
    expect(await admin.locator('#row-1-name').inputValue()).toBe('message')
    await admin.getByRole('button', { name: 'Save fields', exact: true }).click()
    await expect.poll(() => admin.locator('main .alert').first().textContent()).toContain('saved: 3 fields')
    // Shown from the first row down: the editor itself, rather than the page's head.
    await admin.evaluate("window.scrollTo(0, document.getElementById('row-0').offsetTop - 150)")
    await screenshot(admin, 'form-fields')

    const pages: Record<string, string> = {}
    const site = await serveSite(pages)
    try {
      // Intake on, from the site's origin only.
      await tab(admin, 'Intake').click()
      await admin.getByLabel('Take submissions').check()
      await admin.getByLabel('Allowed origins').fill(site.base)
      await admin.getByRole('button', { name: 'Save intake settings' }).click()
      await expect.poll(() => admin.locator('main .alert').first().textContent()).toContain('saved')

      // The embed code, copied with its button and as the page holds it.
      await tab(admin, 'Embed').click()
      const snippet = (await admin.locator('#embed-html').textContent()) as string
      const script = (await admin.locator('#embed-fetch').textContent()) as string
      await admin.getByRole('button', { name: 'Copy the HTML form' }).click()
      expect(await admin.evaluate('navigator.clipboard.readText()')).toBe(snippet)
      await screenshot(admin, 'embed')
      pages['/'] = sitePage(snippet)
      pages['/json'] = sitePage(`${snippet}\n${script}`)
      pages['/thanks'] = sitePage('<p>Thanks from the shop.</p>')

      // HTML mode: a plain post, landing on Lectern's thank-you page.
      const visitor = await context.newPage()
      await visitor.goto(`${site.base}/`)
      // The trap is out of reach: no textbox a person or a screen reader would find.
      expect(await visitor.getByRole('textbox', { name: 'Leave this empty' }).count()).toBe(0)
      expect(await visitor.getByRole('textbox').count()).toBe(2)
      await visitor.getByLabel('Your email').fill('ada@example.com')
      await visitor.getByLabel('Message').fill('Where is my order?')
      await visitor.getByLabel('Topic').selectOption('Orders')
      await visitor.getByRole('button', { name: 'Send' }).click()
      await visitor.waitForURL(`${base}/f/${form.id}`)
      expect(await visitor.locator('h1').textContent()).toBe('Thank you')

      // With a page to go to after sending, the browser lands there.
      await tab(admin, 'Intake').click()
      await admin.getByLabel('After sending, go to').fill(`${site.base}/thanks`)
      await admin.getByRole('button', { name: 'Save intake settings' }).click()
      await visitor.goto(`${site.base}/`)
      await visitor.getByLabel('Your email').fill('bob@example.com')
      await visitor.getByLabel('Message').fill('A return, please.')
      await visitor.getByLabel('Topic').selectOption('Returns')
      await visitor.getByRole('button', { name: 'Send' }).click()
      await visitor.waitForURL(`${site.base}/thanks`)

      // JSON mode: `fetch` from the site's origin, with CORS, staying on the page.
      await visitor.goto(`${site.base}/json`)
      await visitor.getByLabel('Your email').fill('cy@example.com')
      await visitor.getByLabel('Message').fill('Sent by script.')
      await visitor.getByLabel('Topic').selectOption('Orders')
      await visitor.getByRole('button', { name: 'Send' }).click()
      await expect
        .poll(() => visitor.getByRole('status').textContent())
        .toBe('Thank you: your submission has been received.')
      expect(visitor.url()).toBe(`${site.base}/json`)

      // A bot filling in everything it finds is thanked the same, and kept apart.
      await visitor.goto(`${site.base}/`)
      await visitor.getByLabel('Your email').fill('bot@example.com')
      await visitor.getByLabel('Message').fill('Cheap watches')
      await visitor.locator('[name="_gotcha"]').fill('http://watches.example', { force: true })
      await visitor.getByRole('button', { name: 'Send' }).click()
      await visitor.waitForURL(`${site.base}/thanks`)

      // The API lists the three people, not the bot.
      const key = (await ctx.services.keys.createApiKey({ name: 'site', userEmail: ADMIN.email })).plainKey
      const answer = await fetch(`${base}/api/v1/forms/${form.id}/submissions?pageSize=100`, {
        headers: { authorization: `Bearer ${key}` },
      })
      const { data } = (await answer.json()) as { data: { data: Record<string, unknown> }[] }
      expect(data.map((item) => item.data.email).sort()).toEqual([
        'ada@example.com',
        'bob@example.com',
        'cy@example.com',
      ])
      expect(data.find((item) => item.data.email === 'cy@example.com')?.data).toEqual({
        email: 'cy@example.com',
        message: 'Sent by script.',
        topic: 'Orders',
      })

      // The inbox's table has a column per field, in the fields' order.
      await admin.goto(`${base}/admin/forms/${form.id}/submissions?view=table`)
      expect(await admin.locator('thead th').allTextContents()).toEqual([
        'Select',
        'Received',
        'Your email',
        'Message',
        'Topic',
        'Status',
        'Notes',
        'Actions',
      ])
      expect(await admin.locator('tbody tr').count()).toBe(3)

      // The bot is in the Spam view; "Not spam" would move it to the inbox.
      await tab(admin, 'Spam').click()
      expect(await admin.locator('article.submission').count()).toBe(1)
      expect(await admin.locator('article.submission').textContent()).toContain('Cheap watches')
      await screenshot(admin, 'spam')
      await admin.getByRole('button', { name: /^Not spam/ }).click()
      await expect
        .poll(() => admin.locator('main .alert').first().textContent())
        .toContain('Moved to the inbox')
      await admin.goto(`${base}/admin/forms/${form.id}/submissions?view=table`)
      expect(await admin.locator('tbody tr').count()).toBe(4)
    } finally {
      await context.close()
      await new Promise((resolve) => site.server.close(resolve))
    }
    expect(errors).toEqual([])
  }, 120_000)

  it('keeps every tab of a form within a phone’s width, long code and addresses included', async () => {
    const form = await ctx.services.contentAdmin.createForm(
      { title: 'A form with a rather long title for a phone', description: '', isActive: true },
      'cli',
    )
    await ctx.services.intake.updateSettings(form.id, {
      enabled: true,
      allowedOrigins: ['https://www.a-long-domain-name-for-a-shop.example.com'],
      fields: [
        { name: 'email_address_of_the_sender', label: 'Your email address', type: 'email', required: true },
        { name: 'topic', label: 'Topic', type: 'select', options: ['Orders', 'Returns'] },
      ],
    })
    await ctx.services.intake.accept(
      form.id,
      {
        data: { email_address_of_the_sender: 'bot@example.com', message: 'x'.repeat(300) },
        ipAddress: '203.0.113.9',
        userAgent: 'Bot/1.0',
        referrer: null,
        spam: true,
      },
      NO_LISTENERS,
    )
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })
    const page = await context.newPage()
    await page.goto(`${base}/admin/login`)
    await page.getByLabel('Email').fill(ADMIN.email)
    await page.getByLabel('Password').fill(ADMIN.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/admin$/)
    for (const tab of ['edit', 'fields', 'intake', 'embed', 'submissions', 'spam']) {
      await page.goto(`${base}/admin/forms/${form.id}/${tab}`)
      expect(await page.locator('h1').count()).toBe(1)
      expect([tab, await page.evaluate<number>('document.documentElement.scrollWidth')]).toEqual([tab, 390])
    }
    await context.close()
  }, 60_000)
})
