import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, TEST_DIALECT, type TestContext } from '../harness.js'

/**
 * The API reference rendered by Debian's Chromium, with every request outside this server refused:
 * the page must render fully offline and break none of its Content-Security-Policy. The page does
 * not depend on the database, so it runs once, in the SQLite project.
 */
const CHROMIUM = '/usr/bin/chromium'
const available = existsSync(CHROMIUM)

describe.runIf(TEST_DIALECT === 'sqlite' && (available || process.env.CI))(
  'the API reference in a real browser',
  () => {
    let ctx: TestContext
    let base: string
    let browser: Browser

    beforeAll(async () => {
      ctx = await createTestContext()
      base = await ctx.app.listen({ port: 0, host: '127.0.0.1' })
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    }, 60_000)
    afterAll(async () => {
      await browser?.close()
      await ctx?.close()
    })

    it('renders every operation with a curl example, offline, without a CSP violation or a script error', async () => {
      const context = await browser.newContext({ baseURL: base })
      const outside: string[] = []
      const problems: string[] = []
      await context.route('**/*', (route) => {
        const url = route.request().url()
        if (url.startsWith(base) || url.startsWith('data:') || url.startsWith('blob:'))
          return route.continue()
        outside.push(url)
        return route.abort('internetdisconnected')
      })
      const page = await context.newPage()
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text())
      })
      page.on('pageerror', (error) => problems.push(error.message))

      await page.goto('/docs/')
      const sidebar = page.locator('nav, aside').first()
      // Each list is there twice: its GET, and its HEAD (headers only).
      for (const summary of ['List forms', "List a form's submissions", 'List forms (headers only)']) {
        await sidebar.getByText(summary, { exact: true }).waitFor({ state: 'visible', timeout: 20_000 })
      }
      // The other sections are folded in the sidebar until opened.
      for (const [tag, summary] of [
        ['Pages', 'List pages'],
        ['Redirects', 'List URL redirects'],
      ] as const) {
        await sidebar.getByText(tag, { exact: true }).click()
        await sidebar.getByText(summary, { exact: true }).waitFor({ state: 'visible' })
      }
      await sidebar.getByText('List forms', { exact: true }).click()
      await page.getByText(/curl/).first().waitFor({ state: 'visible', timeout: 10_000 })
      await page
        .getByText(/Authorization: Bearer/)
        .first()
        .waitFor({ state: 'visible' })

      expect(outside).toEqual([])
      expect(problems).toEqual([])
      await context.close()
    }, 60_000)
  },
)
