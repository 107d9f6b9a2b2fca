import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { parse } from 'csv-parse/sync'
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { usageChart } from '../../src/admin/views/usage.js'
import { buildSampleContent } from '../../src/services/sample-content.js'
import { lowCostHash } from '../admin/low-cost-password.js'
import { buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

/**
 * The dashboard driven through Debian's Chromium against a real listening server. Without
 * Chromium these tests are skipped on a laptop; with CI set they run and fail loudly.
 */
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]
const SCREENSHOTS = new URL('../../test-results/', import.meta.url)
const available = existsSync(CHROMIUM)
if (!available && !process.env.CI) console.warn(`${CHROMIUM} not found: skipping the browser tests`)

const ADMIN = { email: 'ada@example.com', password: 'analytical engine 1843' }
const ADMIN_HASH = lowCostHash(ADMIN.password)
const DESKTOP = { width: 1000, height: 760 }
const PHONE = { width: 390, height: 844 }
const WIDE = { width: 1280, height: 800 }

describe.skipIf(!available && !process.env.CI)('the dashboard in a real browser', () => {
  let browser: Browser
  /** The site each test works on: a fresh database with the sample content, listening. */
  let site: { ctx: TestContext; base: string }
  /** Content-Security-Policy reports and script errors seen in any page: there must be none. */
  const pageErrors: string[] = []

  /** A site of its own, with Ada as its global admin unless the test sets it up itself. */
  const startSite = async ({ withAdmin }: { withAdmin: boolean }) => {
    const ctx = await createTestContext({ perHour: 1_000_000, perSecond: 1_000_000 })
    await ctx.services.importer.importRecords(buildSampleContent(new Date('2024-06-01T12:00:00Z')))
    // Signed in at a low scrypt cost: the hash at full cost is proven where passwords are set, and
    // here it would only add a second or so of hashing to every test.
    if (withAdmin)
      await buildUser(ctx.database.db, { email: ADMIN.email, role: 'global_admin', passwordHash: ADMIN_HASH })
    return { ctx, base: await ctx.app.listen({ port: 0, host: '127.0.0.1' }) }
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`The browser tests need Chromium at ${CHROMIUM} (apt-get install chromium)`)
    mkdirSync(SCREENSHOTS, { recursive: true })
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })
  // Each test stands alone: its own database, and its own pages free of script errors.
  beforeEach(async () => {
    site = await startSite({ withAdmin: true })
  }, 60_000)
  afterEach(async () => {
    await site?.ctx.close()
    expect(pageErrors.splice(0)).toEqual([])
  })

  /** A browser profile of its own at `viewport`; `options` set what else the reader's browser prefers. */
  const newContext = async (
    viewport = DESKTOP,
    options: Pick<BrowserContextOptions, 'colorScheme' | 'timezoneId' | 'locale'> = {},
  ): Promise<BrowserContext> => {
    const context = await browser.newContext({
      ...options,
      viewport,
      baseURL: site.base,
      isMobile: viewport === PHONE,
    })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.base })
    context.on('page', watch)
    return context
  }
  const watch = (page: Page) => {
    // Error statuses the tests ask for (403, 422) are logged too; only refusals and script errors count.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        pageErrors.push(message.text())
    })
    page.on('pageerror', (error) => pageErrors.push(error.message))
  }
  const screenshot = (page: Page, name: string) =>
    page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname })
  const api = async (path: string, key: string) =>
    fetch(`${site.base}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } })
  const signIn = async (page: Page, email: string, password: string) => {
    await page.goto('/admin/login')
    await page.getByLabel('Email').fill(email)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/admin$/)
  }
  const flash = (page: Page) => page.locator('main .alert').first()
  /** How wide the page's content is: wider than the screen means sideways scrolling. */
  const pageWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth')

  it('sets up, signs in, creates and copies a key that the API accepts, then revokes it', async () => {
    // This one starts where a new site starts: with nobody to sign in as.
    await site.ctx.close()
    site = await startSite({ withAdmin: false })
    const context = await newContext()
    const page = await context.newPage()

    await page.goto('/admin')
    await expect.poll(() => page.url()).toMatch(/\/admin\/setup$/)
    await screenshot(page, 'setup')
    await page.getByLabel('Email').fill(ADMIN.email)
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password)
    await page.getByLabel('Password again').fill(ADMIN.password)
    await page.getByRole('button', { name: 'Create admin account' }).click()

    await page.waitForURL(/\/admin\/login/)
    expect(await page.getByRole('status').textContent()).toContain('Your admin account is ready')
    await page.getByLabel('Email').fill(ADMIN.email)
    await screenshot(page, 'sign-in')
    await page.getByLabel('Password').fill(ADMIN.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/admin$/)
    expect(await page.locator('h1').textContent()).toBe('Overview')
    await screenshot(page, 'overview')

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('link', { name: 'Create your first API key' }).click()
    await page.getByLabel('Name').fill('Marketing website')
    await page.getByRole('button', { name: 'Create key' }).click()
    await expect.poll(() => page.locator('h1').textContent()).toBe('API key created')
    const shown = await page.locator('#new-key').inputValue()
    expect(shown).toMatch(/^lk_live_[0-9A-Za-z]{40}$/)

    await page.getByRole('button', { name: 'Copy' }).click()
    await expect.poll(() => page.locator('#copy-status').textContent()).toBe('Copied to the clipboard.')
    const copied = await page.evaluate<string>('navigator.clipboard.readText()')
    expect(copied).toBe(shown)
    await screenshot(page, 'key-created')

    expect((await api('/forms', copied)).status).toBe(200)

    // Reloading the page that showed the key neither creates a second key nor shows this one again.
    await page.reload()
    await page.waitForURL(/\/admin\/keys$/)
    expect(await flash(page).textContent()).toContain('A new key is shown only once')
    expect(await page.content()).not.toContain(shown)
    expect(await page.locator('tr', { hasText: 'Marketing website' }).count()).toBe(1)
    const named = (await site.ctx.services.keys.listApiKeys()).filter((k) => k.name === 'Marketing website')
    expect(named).toHaveLength(1)

    const row = page.locator('tr', { hasText: 'Marketing website' })
    expect(await row.textContent()).toContain('Active')
    await screenshot(page, 'api-keys')
    await row.getByRole('link', { name: 'Revoke Marketing website…' }).click()
    expect(await page.locator('h1').textContent()).toBe('Revoke the API key “Marketing website”?')
    await screenshot(page, 'revoke-confirmation')
    await page.getByRole('button', { name: 'Revoke key' }).click()
    await page.waitForURL(/\/admin\/keys$/)
    expect(await flash(page).textContent()).toContain('revoked')
    expect(await page.locator('tr', { hasText: 'Marketing website' }).textContent()).toContain('Revoked')

    const refused = await api('/forms', copied)
    expect(refused.status).toBe(401)
    expect(await refused.json()).toMatchObject({ error: 'invalid_api_key' })
    await context.close()
  }, 120_000)

  it('adds a user, whose key follows a role change made in the dashboard', async () => {
    const adminContext = await newContext()
    const admin = await adminContext.newPage()
    await signIn(admin, ADMIN.email, ADMIN.password)
    await admin.goto('/admin/users/new')
    await admin.getByLabel('Email').fill('grace@example.com')
    await admin.getByLabel(/Global admin/).check()
    await admin.getByRole('button', { name: 'Add user' }).click()
    await expect.poll(() => admin.locator('h1').textContent()).toBe('grace@example.com can now sign in')
    const password = await admin.locator('#new-password').inputValue()
    await screenshot(admin, 'user-added')

    // Grace signs in in her own browser and creates a key of her own.
    const graceContext = await newContext()
    const grace = await graceContext.newPage()
    await signIn(grace, 'grace@example.com', password)
    await grace.goto('/admin/keys/new')
    await grace.getByLabel('Name').fill('Grace’s script')
    await grace.getByRole('button', { name: 'Create key' }).click()
    const key = await grace.locator('#new-key').inputValue()
    expect((await api('/forms/form_contact/submissions', key)).status).toBe(200)

    await admin.goto('/admin/users')
    await admin.getByLabel('Role of grace@example.com', { exact: true }).selectOption('editor')
    await admin.getByRole('button', { name: 'Change the role of grace@example.com' }).click()
    await admin.waitForURL(/\/admin\/users$/)
    expect(await flash(admin).textContent()).toContain('grace@example.com is now an editor')
    await screenshot(admin, 'users')

    const narrowed = await api('/forms/form_contact/submissions', key)
    expect(narrowed.status).toBe(403)
    expect(await narrowed.json()).toMatchObject({ error: 'insufficient_permissions' })
    expect((await api('/forms', key)).status).toBe(200)

    // Her open session follows the new role too.
    const response = await grace.goto('/admin/keys')
    expect(response?.status()).toBe(403)
    await grace.goto('/admin')
    const nav = grace.getByRole('navigation', { name: 'Main' })
    expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0)
    expect(await nav.getByRole('link', { name: 'Redirects' }).count()).toBe(1)
    await graceContext.close()
    await adminContext.close()
  }, 120_000)

  it('manages redirects: creates, refuses a loop with a clear message, flattens a chain, edits and deletes', async () => {
    const context = await newContext()
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)
    const create = async (from: string, to: string) => {
      await page.goto('/admin/redirects/new')
      await page.getByLabel('From path').fill(from)
      await page.getByLabel('To path').fill(to)
      await page.getByRole('button', { name: 'Create redirect' }).click()
    }

    await create('/old-journal', '/journal')
    await page.waitForURL(/\/admin\/redirects\?page=\d+#redirect-/)
    expect(await flash(page).textContent()).toContain('Redirect from /old-journal to /journal created.')

    await create('/journal', '/old-journal')
    const problem = page.getByRole('alert')
    expect(await problem.textContent()).toContain(
      'This would make a redirect loop (/journal → /old-journal → /journal)',
    )
    // The error summary takes the focus, so a screen reader reads it first.
    expect(await page.locator(':focus').getAttribute('role')).toBe('alert')
    await screenshot(page, 'redirect-loop-refused')

    await create('//evil.example', '/journal')
    expect(await page.getByRole('alert').textContent()).toContain("must not start with '//'")

    await create('/press', '/old-journal')
    await page.waitForURL(/\/admin\/redirects/)
    expect(await flash(page).textContent()).toContain('/press → /old-journal → /journal')
    await page.goto('/admin/redirects')
    expect(await page.getByRole('region', { name: /form.* chain/ }).textContent()).toContain(
      '/press → /old-journal → /journal',
    )
    await screenshot(page, 'redirects')
    await page.getByRole('button', { name: 'Flatten chains' }).click()
    await page.waitForURL(/\/admin\/redirects$/)
    expect(await flash(page).textContent()).toContain(
      'Flattened: 1 redirect now points straight at the end of its chain.',
    )

    const key = (await site.ctx.services.keys.createApiKey({ name: 'checker', userEmail: ADMIN.email }))
      .plainKey
    const served = async () =>
      (
        (await (await api('/page-builder/redirects?pageSize=100', key)).json()) as {
          data: { fromPath: string; toPath: string; isActive: boolean; type: string }[]
        }
      ).data
    expect((await served()).find((r) => r.fromPath === '/press')?.toPath).toBe('/journal')

    const row = () => page.locator('tr', { hasText: '/old-journal' }).filter({ hasNotText: '/press' })
    await row().getByRole('link', { name: 'Edit the redirect from /old-journal' }).click()
    await page.getByLabel(/Temporary \(302\)/).check()
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.waitForURL(/\/admin\/redirects/)
    expect((await served()).find((r) => r.fromPath === '/old-journal')?.type).toBe('temporary')

    await page.goto('/admin/redirects')
    await row().getByRole('button', { name: 'Deactivate the redirect from /old-journal' }).click()
    await page.waitForURL(/\/admin\/redirects/)
    expect((await served()).find((r) => r.fromPath === '/old-journal')?.isActive).toBe(false)

    await page.goto('/admin/redirects')
    await row().getByRole('link', { name: 'Delete the redirect from /old-journal…' }).click()
    await page.getByRole('button', { name: 'Delete redirect' }).click()
    await page.waitForURL(/\/admin\/redirects$/)
    expect((await served()).find((r) => r.fromPath === '/old-journal')).toBeUndefined()
    await context.close()
  }, 120_000)

  it('marks a submission read and starred with a note, and the API shows it afterwards', async () => {
    const context = await newContext()
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Forms' }).click()
    await screenshot(page, 'forms')
    await page.getByRole('link', { name: 'Contact us' }).first().click()
    await page.waitForURL(/\/admin\/forms\/form_contact\/submissions$/)
    const first = page.locator('article.submission').first()
    const id = (await first.getAttribute('id'))?.replace('submission-', '') as string
    await first.getByRole('button', { name: 'Mark as read' }).click()
    await page.waitForURL(new RegExp(`#submission-${id}$`))
    await page.locator(`#submission-${id}`).getByRole('button', { name: 'Star', exact: true }).click()
    await page.waitForURL(new RegExp(`#submission-${id}$`))
    await page.locator(`#submission-${id}`).getByLabel('Notes').fill('Called back on Tuesday.')
    await page.locator(`#submission-${id}`).getByRole('button', { name: 'Save notes' }).click()
    await page.waitForURL(new RegExp(`#submission-${id}$`))
    expect(await flash(page).textContent()).toContain('Notes saved.')
    await page.evaluate('window.scrollTo(0, 0)')
    await screenshot(page, 'submissions')

    const key = (await site.ctx.services.keys.createApiKey({ name: 'flags', userEmail: ADMIN.email }))
      .plainKey
    const body = (await (await api('/forms/form_contact/submissions?pageSize=100', key)).json()) as {
      data: { id: string; isRead: boolean; isStarred: boolean; notes: string | null }[]
    }
    expect(body.data.find((s) => s.id === id)).toMatchObject({
      isRead: true,
      isStarred: true,
      notes: 'Called back on Tuesday.',
    })

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Pages' }).click()
    await screenshot(page, 'pages')
    await context.close()
  }, 120_000)

  it('works on a phone-width screen and from the keyboard', async () => {
    const context = await newContext(PHONE)
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)
    await page.goto('/admin/redirects')
    // No horizontal scrolling: the tables turn into cards.
    expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width)
    await screenshot(page, 'phone-redirects')
    await page.goto('/admin/forms/form_contact/submissions')
    expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width)
    await screenshot(page, 'phone-submissions')

    // The first Tab reaches the skip link, which moves the focus to the content.
    await page.goto('/admin/pages')
    await page.keyboard.press('Tab')
    expect(await page.locator(':focus').textContent()).toBe('Skip to content')
    await page.keyboard.press('Enter')
    expect(await page.locator(':focus').getAttribute('id')).toBe('main')
    await context.close()
  }, 120_000)

  it('keeps the Users page within a phone, and offers the last global admin no way to lock the site out', async () => {
    // Ada is the one enabled global admin; Lin, an editor, can be disabled.
    await site.ctx.services.users.createUser({ email: 'lin@example.com', role: 'editor' })
    const context = await newContext(PHONE)
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)
    await page.goto('/admin/users')
    await screenshot(page, 'phone-users')
    expect(await pageWidth(page)).toBeLessThanOrEqual(PHONE.width)
    // Every control stays inside its card: nothing is cut off at the card's edge.
    for (const row of await page.locator('tbody tr').all()) {
      const card = await row.boundingBox()
      for (const control of await row.locator('button, select, a').all()) {
        const box = await control.boundingBox()
        expect(card && box && box.x >= card.x && box.x + box.width <= card.x + card.width).toBe(true)
      }
    }

    const ada = page.locator('tr', { hasText: ADMIN.email })
    expect(await ada.getByRole('button').count()).toBe(0)
    expect(await ada.getByRole('link').count()).toBe(0)
    expect(await ada.locator('select').count()).toBe(0)
    expect(await ada.textContent()).toContain('The last global admin')
    const lin = page.locator('tr', { hasText: 'lin@example.com' })
    expect(await lin.getByRole('button', { name: /Disable/ }).count()).toBe(1)

    // The role explanations promise keys only to those who can create them.
    const roles = await page.locator('details.explainer dl').textContent()
    expect(roles).toContain('Editor')
    expect(roles).toMatch(/Editor[\s\S]*Cannot create API keys/)
    expect(roles).toMatch(/Viewer[\s\S]*Cannot create API keys/)
    await context.close()
  }, 120_000)

  it('sends a page past the end to the last page, and a page that is not a number to the first, saying so', async () => {
    const context = await newContext()
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)
    await page.goto('/admin/forms/form_contact/submissions?page=3')
    await page.waitForURL(/\/submissions\?page=2$/)
    expect(await flash(page).textContent()).toBe(
      'There is no page 3: the list has 2 pages, and this is the last.',
    )
    expect(await page.locator('.pagination span').textContent()).toBe('Page 2 of 2')

    // The first page is the list's own address: no `page=1` in it.
    await page.goto('/admin/pages?page=abc')
    await page.waitForURL(/\/admin\/pages$/)
    expect(await flash(page).textContent()).toBe('“abc” is not a page number, so this is the first page.')
    await context.close()
  }, 120_000)

  it('shows "Notes saved." on screen, beside the submission whose notes were saved, on a phone', async () => {
    const context = await newContext(PHONE)
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)
    await page.goto('/admin/forms/form_contact/submissions')
    const card = page.locator('article.submission').nth(8)
    const id = await card.getAttribute('id')
    await card.getByLabel('Notes').fill('Replied by phone.')
    await card.getByRole('button', { name: 'Save notes' }).click()
    await page.waitForURL(new RegExp(`#${id}$`))
    const saved = page.locator(`#${id}`).getByRole('status')
    expect(await saved.textContent()).toBe('Notes saved.')
    const box = await saved.boundingBox()
    expect(box && box.y >= 0 && box.y + box.height <= PHONE.height).toBe(true)
    // Said once, where it happened, not also at the top of the page out of sight.
    expect(await page.getByText('Notes saved.').count()).toBe(1)
    await screenshot(page, 'phone-notes-saved')
    await context.close()
  }, 120_000)

  it('takes a form from creation through its inbox, exports and deletions, then a password change and a key that expires, all in the audit log', async () => {
    const context = await newContext()
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Forms' }).click()
    await page.getByRole('link', { name: 'New form' }).click()
    await page.getByLabel('Title').fill('Volunteer sign-up')
    await page.getByLabel('Description (optional)').fill('People who offer to help at the summer fair.')
    await page.getByRole('button', { name: 'Create form' }).click()
    await page.waitForURL(/\/admin\/forms\?page=\d+#form-/)
    expect(await flash(page).textContent()).toContain('Form “Volunteer sign-up” created.')
    const formId = decodeURIComponent(new URL(page.url()).hash.slice('#form-'.length))

    // Visitors send 30 submissions; every third offers to help in the garden.
    const at = (i: number) => `2024-07-01T09:${String(i).padStart(2, '0')}:00Z`
    const idOf = (i: number) => `submission_volunteer_${String(i).padStart(2, '0')}`
    await site.ctx.services.importer.importRecords({
      submissions: Array.from({ length: 30 }, (_, i) => ({
        id: idOf(i),
        formId,
        data: { name: `Volunteer ${i}`, offer: i % 3 === 0 ? 'I can weed the garden' : 'Anything at all' },
        createdAt: at(i),
      })),
    })
    const key = (await site.ctx.services.keys.createApiKey({ name: 'checker', userEmail: ADMIN.email }))
      .plainKey
    const served = async () =>
      (
        (await (await api(`/forms/${formId}/submissions?pageSize=100`, key)).json()) as {
          data: { id: string; isRead: boolean }[]
        }
      ).data

    await page.reload()
    await page.getByRole('link', { name: '30 submissions to Volunteer sign-up' }).click()
    await page.waitForURL(new RegExp(`/admin/forms/${formId}/submissions$`))
    expect(await page.locator('.lead').textContent()).toContain('30 submissions, newest first')

    const search = page.getByRole('search')
    await search.getByLabel('Search').fill('garden')
    await search.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/[?&]q=garden(&|$)/)
    expect(await page.locator('.lead').textContent()).toContain('10 submissions in this view')
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Table' }).click()
    await page.waitForURL(/view=table/)
    expect(page.url()).toContain('q=garden')
    // Newest first: 27, 24, … 0.
    const garden = Array.from({ length: 10 }, (_, n) => 27 - 3 * n)
    const rowIds = () =>
      page.locator('tbody tr').evaluateAll((rows) => rows.map((row) => row.id.replace('submission-', '')))
    expect(await rowIds()).toEqual(garden.map(idOf))

    const marked = [27, 24, 21]
    for (const i of marked) await page.getByLabel(`Select the submission of ${at(i)}`).check()
    await page.getByRole('button', { name: 'Mark read' }).click()
    await expect.poll(() => flash(page).textContent()).toContain('3 submissions marked as read.')
    expect(page.url()).toMatch(/view=table/)
    const readNow = (await served()).filter((s) => s.isRead).map((s) => s.id)
    expect(readNow.sort()).toEqual(marked.map(idOf).sort())

    // The export is this view: the search's ten, newest first, with the flags just set.
    const downloading = page.waitForEvent('download')
    await page.getByRole('link', { name: 'CSV', exact: true }).click()
    const download = await downloading
    expect(download.suggestedFilename()).toMatch(
      new RegExp(`^submissions-${formId}-\\d{4}-\\d{2}-\\d{2}\\.csv$`),
    )
    const file = await download.path()
    const rows = parse(readFileSync(file, 'utf8'), { columns: true }) as Record<string, string>[]
    expect(rows.map((row) => row.id)).toEqual(garden.map(idOf))
    expect(rows.map((row) => row.createdAt)).toEqual(garden.map(at))
    expect(rows.filter((row) => row.isRead === 'true').map((row) => row.id)).toEqual(marked.map(idOf))
    for (const row of rows)
      expect(JSON.parse(row.data as string)).toMatchObject({ offer: 'I can weed the garden' })

    await page.getByRole('link', { name: `Delete the submission of ${at(18)}…` }).click()
    expect(await page.locator('h1').textContent()).toBe(`Delete the submission of ${at(18)}?`)
    await page.getByRole('button', { name: 'Delete the submission' }).click()
    await expect.poll(() => flash(page).textContent()).toContain('The submission was deleted.')
    expect(page.url()).toMatch(/view=table/)
    expect((await served()).map((s) => s.id)).not.toContain(idOf(18))

    for (const i of [15, 12]) await page.getByLabel(`Select the submission of ${at(i)}`).check()
    await page.getByRole('button', { name: 'Delete', exact: true }).click()
    await expect.poll(() => page.locator('h1').textContent()).toBe('Delete 2 submissions?')
    // Asking is not deleting.
    expect((await served()).map((s) => s.id)).toEqual(expect.arrayContaining([idOf(15), idOf(12)]))
    await page.getByRole('button', { name: 'Delete 2 submissions' }).click()
    await expect.poll(() => flash(page).textContent()).toContain('2 submissions deleted.')
    const left = (await served()).map((s) => s.id)
    expect(left).toHaveLength(27)
    expect(left).not.toContain(idOf(15))
    expect(left).not.toContain(idOf(12))
    expect(await rowIds()).toEqual([27, 24, 21, 9, 6, 3, 0].map(idOf))

    const newPassword = 'difference engine 1822'
    // Below 1121px the header hides the link to the account (the email): opened by its address.
    await page.goto('/admin/account')
    await page.getByLabel('Current password').fill(ADMIN.password)
    await page.getByLabel('New password', { exact: true }).fill(newPassword)
    await page.getByLabel('New password again').fill(newPassword)
    await page.getByRole('button', { name: 'Change password' }).click()
    await expect.poll(() => flash(page).textContent()).toContain('Your password is changed.')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(/\/admin\/login/)
    await page.getByLabel('Email').fill(ADMIN.email)
    await page.getByLabel('Password').fill(ADMIN.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('The email or password is not right')
    expect(page.url()).toMatch(/\/admin\/login/)
    await signIn(page, ADMIN.email, newPassword)

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('link', { name: 'Create new API key' }).click()
    await page.getByLabel('Name').fill('Volunteer rota')
    await page.getByLabel('Expires on (optional)').fill(tomorrow)
    await page.getByRole('button', { name: 'Create key' }).click()
    await expect.poll(() => page.locator('h1').textContent()).toBe('API key created')
    const expiring = await page.locator('#new-key').inputValue()
    expect((await api('/forms', expiring)).status).toBe(200)

    // A day and more passes: the key's expiry is now behind it.
    await site.ctx.database.db
      .updateTable('api_keys')
      .set({ expires_at: '2024-01-01T00:00:00Z' })
      .where('name', '=', 'Volunteer rota')
      .execute()
    const refused = await api('/forms', expiring)
    expect(refused.status).toBe(401)
    const problem = (await refused.json()) as { error: string; message: string }
    expect(problem.error).toBe('api_key_inactive')
    expect(problem.message).toMatch(/expired/)

    await page.goto('/admin/keys')
    await page.getByRole('search').getByLabel('Status').selectOption({ label: 'Expired' })
    await page.getByRole('search').getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/\/admin\/keys\?.*filter=expired/)
    const expiredRows = page.locator('tbody tr')
    expect(await expiredRows.count()).toBe(1)
    expect(await expiredRows.first().textContent()).toContain('Volunteer rota')
    expect(await expiredRows.first().locator('.badge').textContent()).toBe('Expired')

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click()
    await page.waitForURL(/\/admin\/audit$/)
    const entries = await page
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.querySelector('td[data-label="Who"]')?.textContent?.trim() ?? '',
          tr.querySelector('td[data-label="Action"]')?.textContent?.trim() ?? '',
        ]),
      )
    for (const action of [
      'form.created',
      'submissions.updated',
      'submissions.exported',
      'submissions.deleted',
      'user.password_changed',
      'key.created',
    ])
      expect(entries).toContainEqual([ADMIN.email, action])
    expect(entries.filter(([, action]) => action === 'submissions.deleted')).toHaveLength(2)
    expect(entries).toContainEqual(['system', 'key.expired'])
    await context.close()
  }, 180_000)

  /** Keys with and without an expiry, one of them past it and refused once, and a few changes: what the new screens show. */
  const furnishSite = async () => {
    const ada = { email: ADMIN.email }
    const inAMonth = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10)
    const { keys, contentAdmin, inbox } = site.ctx.services
    await keys.createApiKey({ name: 'Marketing website', userEmail: ADMIN.email, expiresAt: inAMonth }, ada)
    await keys.createApiKey({ name: 'Nightly backup', userEmail: ADMIN.email }, ada)
    const old = await keys.createApiKey(
      { name: 'Spring campaign', userEmail: ADMIN.email, expiresAt: inAMonth },
      ada,
    )
    await site.ctx.database.db
      .updateTable('api_keys')
      .set({ expires_at: '2024-05-01T00:00:00Z' })
      .where('id', '=', old.key.id)
      .execute()
    expect((await api('/forms', old.plainKey)).status).toBe(401)
    await contentAdmin.createForm(
      { title: 'Volunteer sign-up', description: 'Helpers for the summer fair.', isActive: true },
      ada,
    )
    const { items } = await inbox.listPage(
      { formId: 'form_contact', filter: 'all', sort: 'newest', search: '' },
      1,
      5,
    )
    await inbox.applyBulk(
      'form_contact',
      items.map((item) => item.id),
      'read',
      ada,
    )
  }

  for (const [device, viewport, prefix] of [
    ['desktop', DESKTOP, ''],
    ['phone', PHONE, 'phone-'],
  ] as const) {
    it(`shows every new screen within a ${device}'s width: editors, lists with their controls, the inbox table, confirmations, account, keys, audit log and recent activity`, async () => {
      await furnishSite()
      const context = await newContext(viewport)
      const page = await context.newPage()
      await signIn(page, ADMIN.email, ADMIN.password)
      /** Each screen fits the screen's width (no sideways scrolling) and is kept as a picture. */
      const shows = async (name: string) => {
        expect(await pageWidth(page)).toBeLessThanOrEqual(viewport.width)
        await screenshot(page, `${prefix}${name}`)
      }

      await page.goto('/admin/forms/new')
      await page.getByLabel('Description (optional)').fill('Where visitors ask to be called back.')
      await page.getByRole('button', { name: 'Create form' }).click()
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('There is a problem')
      const title = page.getByLabel('Title')
      expect(await title.getAttribute('aria-invalid')).toBe('true')
      expect(await page.locator('#field-title-problem').textContent()).toMatch(/title/i)
      expect(await page.getByLabel('Description (optional)').inputValue()).toBe(
        'Where visitors ask to be called back.',
      )
      await shows('form-editor')

      await page.goto('/admin/pages/new')
      await page.getByLabel('Title').fill('Summer fair')
      await page.getByLabel('Slug').fill('summer-fair')
      await page.getByLabel('Path').fill('/events/summer-fair')
      await page.getByLabel('Type').fill('event')
      await page.getByLabel(/Published/).check()
      await shows('page-editor')

      await page.goto('/admin/forms')
      const controls = page.getByRole('search', { name: 'Find forms' })
      for (const label of ['Search', 'Show', 'Order', 'Per page'])
        expect(await controls.getByLabel(label, { exact: true }).count()).toBe(1)
      await controls.getByLabel('Order').selectOption({ label: 'Title, A–Z' })
      await controls.getByRole('button', { name: 'Apply' }).click()
      await page.waitForURL(/\/admin\/forms\?.*sort=title/)
      const titles = await page.locator('tbody tr td[data-label="Title"]').allTextContents()
      expect(titles).toEqual([...titles].sort((a, b) => a.localeCompare(b)))
      await shows('forms-search')

      await page.goto('/admin/forms/form_contact/submissions?view=table')
      const boxes = page.getByRole('checkbox', { name: /^Select the submission of / })
      expect(await boxes.count()).toBe(20)
      for (const n of [0, 1, 2]) await boxes.nth(n).check()
      await shows('inbox-table')
      await page.getByRole('button', { name: 'Delete', exact: true }).click()
      await expect.poll(() => page.locator('h1').textContent()).toBe('Delete 3 submissions?')
      expect(await page.getByRole('button', { name: 'Delete 3 submissions' }).count()).toBe(1)
      await shows('bulk-delete')
      await page.getByRole('link', { name: 'Cancel' }).click()
      await page.waitForURL(/\/admin\/forms\/form_contact\/submissions/)

      // The header keeps a visible way to one's account, and on a desktop all its links in one row.
      await page.goto('/admin')
      const header = page.locator('header.topbar')
      await header.getByRole('link', { name: /Account|Global admin/ }).click()
      await page.waitForURL(/\/admin\/account$/)
      if (device === 'desktop') expect((await header.boundingBox())?.height).toBeLessThan(70)
      expect(await page.locator('h1').textContent()).toBe('Your account')
      for (const label of ['Current password', 'New password', 'New password again'])
        expect(await page.getByLabel(label, { exact: true }).count()).toBe(1)
      await shows('account')

      await page.goto('/admin/keys')
      const badgeOf = (name: string) => page.locator('tr', { hasText: name }).locator('.badge')
      expect(await badgeOf('Spring campaign').textContent()).toBe('Expired')
      expect(await badgeOf('Marketing website').textContent()).toBe('Active')
      expect(await page.locator('tr', { hasText: 'Nightly backup' }).textContent()).toContain('No expiry')
      await shows('keys-expiry')

      await page.goto('/admin/audit')
      expect(await page.locator('tr', { hasText: 'key.expired' }).textContent()).toContain('system')
      await shows('audit')

      await page.goto('/admin')
      const recent = page.getByRole('region', { name: 'Recent activity' })
      expect(await recent.locator('tbody tr').count()).toBeGreaterThan(0)
      expect(await recent.textContent()).toContain('submissions.updated')
      await page.evaluate(
        "document.getElementById('recent-activity').scrollIntoView(); window.scrollBy(0, -24)",
      )
      await shows('overview-activity')
      await context.close()
    }, 180_000)
  }

  /** The top of each element `selector` matches inside each of `rows`: one array per row. */
  const topsPerRow = (page: Page, rows: string, selector: string) =>
    page
      .locator(rows)
      .evaluateAll(
        (elements, inner) =>
          elements.map((row) =>
            [...row.querySelectorAll(inner)].map((element) =>
              Math.round(element.getBoundingClientRect().top),
            ),
          ),
        selector,
      )

  for (const [device, viewport, prefix] of [
    ['wide screen', WIDE, 'wide-'],
    ['phone', PHONE, 'phone-'],
  ] as const) {
    it(`lays the dashboard out at ${viewport.width} px: one-row header, one-line row actions and key prefixes, one Show control, labels beside their values, the form's id to copy, the chart's labels inside it, and clear errors`, async () => {
      await furnishSite()
      const ada = { email: ADMIN.email }
      await site.ctx.services.contentAdmin.createForm(
        { title: 'Wordless', description: '', isActive: true },
        ada,
      )
      await site.ctx.services.redirects.createRedirect({ fromPath: '/loop-here', toPath: '/loop-there' })
      const context = await newContext(viewport)
      const page = await context.newPage()
      await signIn(page, ADMIN.email, ADMIN.password)
      const shows = async (name: string) => {
        expect(await pageWidth(page)).toBeLessThanOrEqual(viewport.width)
        await screenshot(page, `${prefix}${name}`)
      }
      /** Every row's action buttons share one line. */
      const actionsOnOneLine = async () => {
        const rows = await topsPerRow(page, 'tbody .row-actions', ':scope > a, :scope > form > button')
        expect(rows.length).toBeGreaterThan(0)
        for (const tops of rows) expect(new Set(tops).size, JSON.stringify(tops)).toBe(1)
      }

      // The header: on a wide screen its items share one row, as high as its tallest item.
      await page.goto('/admin/keys')
      const header = await page.evaluate<{
        inner: number
        tallest: number
        row: number
        tops: number[]
      }>(`(() => {
        const bar = document.querySelector('header.topbar')
        const items = [...bar.querySelectorAll('.brand, .main-nav a, .account > *')].map((item) => item.getBoundingClientRect())
        const style = getComputedStyle(bar)
        return {
          inner: bar.getBoundingClientRect().height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom),
          tallest: Math.max(...items.map((item) => item.height)),
          row: Math.max(...[...bar.querySelectorAll('.main-nav a, .account .button')].map((item) => item.getBoundingClientRect().height)),
          tops: [...new Set(items.map((item) => Math.round(item.top + item.height / 2)))],
        }
      })()`)
      if (device === 'wide screen') {
        // One row: no item (the brand included) is taller than a link or a button, nor is the bar.
        expect(Math.round(header.tallest)).toBeLessThanOrEqual(Math.ceil(header.row))
        expect(Math.round(header.inner)).toBeLessThanOrEqual(Math.ceil(header.row))
        expect(Math.max(...header.tops) - Math.min(...header.tops)).toBeLessThanOrEqual(2)
      }
      // A key's prefix is one line; a row's actions are one line.
      const prefixLines = await page
        .locator('code.key-prefix')
        .evaluateAll((codes) => codes.map((code) => code.getClientRects().length))
      expect(prefixLines.length).toBeGreaterThan(0)
      expect(prefixLines.every((lines) => lines === 1)).toBe(true)
      await actionsOnOneLine()
      await shows('layout-keys')

      // Users: Reset password… is one of the row's actions, of the same size as the others.
      await page.goto('/admin/users')
      await site.ctx.services.users.createUser({
        email: 'grace@example.com',
        password: 'compiler pioneer 1952',
        role: 'editor',
      })
      await page.reload()
      await actionsOnOneLine()
      const sizes = await page.evaluate<[string, string][]>(`[...document.querySelectorAll('tr')]
        .filter((row) => row.textContent.includes('grace@example.com'))
        .flatMap((row) => [...row.querySelectorAll('.row-actions .button')])
        .map((button) => [button.textContent, getComputedStyle(button).fontSize])`)
      expect(sizes.map(([label]) => label)).toContain('Reset password…')
      expect(new Set(sizes.map(([, size]) => size)).size).toBe(1)
      await shows('layout-users')

      // Forms: no description is a dash, not a word that reads like a value.
      await page.goto('/admin/forms?sort=title')
      const wordless = page.locator('tr', { hasText: 'Wordless' }).locator('td[data-label="Description"]')
      expect(await wordless.locator('[aria-hidden="true"]').textContent()).toBe('—')
      expect(await wordless.textContent()).toContain('No description')
      expect(await page.locator('td[data-label="Description"]', { hasText: 'None' }).count()).toBe(0)
      await actionsOnOneLine()
      await shows('layout-forms')

      // Pages: "since …" stays beside its badge, in the value column, not under the label.
      await page.goto('/admin/pages')
      const published = await page
        .locator('td[data-label="Status"]', { hasText: 'since' })
        .first()
        .evaluate((cell) => {
          const badge = cell.querySelector('.badge')?.getBoundingClientRect()
          const since = cell.querySelector('.muted')?.getBoundingClientRect()
          return {
            badgeLeft: badge?.left ?? -1,
            sinceLeft: since?.left ?? -1,
            badgeBottom: badge?.bottom ?? -1,
            sinceTop: since?.top ?? -1,
          }
        })
      expect(published.sinceLeft).toBeGreaterThanOrEqual(published.badgeLeft)
      if (device === 'wide screen') expect(published.sinceTop).toBeLessThan(published.badgeBottom)
      await actionsOnOneLine()
      await shows('layout-pages')

      // The inbox: one Show control, each label just above its own control, and the form's id to copy.
      await page.goto('/admin/forms/form_contact/submissions')
      expect(await page.getByText('Show', { exact: true }).count()).toBe(1)
      expect(
        await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Unread' }).count(),
      ).toBe(0)
      for (const label of ['Search', 'Show', 'Order', 'Per page']) {
        const boxes = await page.evaluate<{
          labelLeft: number
          labelBottom: number
          controlLeft: number
          controlTop: number
        }>(`(() => {
          const label = [...document.querySelectorAll('form[role="search"] label')].find((item) => item.textContent === ${JSON.stringify(label)})
          const [a, b] = [label.getBoundingClientRect(), label.control.getBoundingClientRect()]
          return { labelLeft: a.left, labelBottom: a.bottom, controlLeft: b.left, controlTop: b.top }
        })()`)
        expect(Math.abs(boxes.labelLeft - boxes.controlLeft), label).toBeLessThanOrEqual(1)
        expect(boxes.controlTop - boxes.labelBottom, label).toBeGreaterThanOrEqual(0)
        expect(boxes.controlTop - boxes.labelBottom, label).toBeLessThanOrEqual(12)
      }
      expect(await page.locator('#form-id').textContent()).toBe('form_contact')
      const copy = page.getByRole('button', { name: 'Copy the form id' })
      await copy.click()
      await expect.poll(() => page.locator('#form-id-status').textContent()).toBe('Copied to the clipboard.')
      expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe('form_contact')
      await shows('layout-inbox')

      // A key's usage chart: its last day label ends inside the chart, even when that day starts at the last hour.
      await page.goto('/admin/keys')
      await page.locator('tbody td[data-label="Name"] a').first().click()
      await page.waitForURL(/\/admin\/keys\/key_/)
      const lastLabelInside = () =>
        page.evaluate<boolean>(`(() => {
          const chart = document.querySelector('svg.usage-chart')
          const box = [...chart.querySelectorAll('text')].at(-1)?.getBBox()
          return box !== undefined && box.x >= 0 && box.x + box.width <= chart.viewBox.baseVal.width
        })()`)
      expect(await lastLabelInside()).toBe(true)
      await shows('layout-key-usage')
      const start = Date.UTC(2024, 5, 1, 1)
      const hours = Array.from({ length: 168 }, (_, index) => ({
        hour: new Date(start + index * 3_600_000).toISOString().replace('.000Z', 'Z'),
        requests: index % 7,
        rejected: 0,
      }))
      expect(hours.at(-1)?.hour).toBe('2024-06-08T00:00:00Z')
      const keyPage = page.url()
      await page.goto('about:blank')
      await page.setContent(
        `<!doctype html><body style="width:${viewport.width - 40}px">${usageChart(hours).value}</body>`,
      )
      expect(await lastLabelInside()).toBe(true)
      await page.goto(keyPage)

      // A signed-in reader at an address with no page is offered the overview, not the sign-in.
      await page.goto('/admin/no-such-page')
      expect(await page.locator('h1').textContent()).toBe('Page not found')
      expect(await page.getByRole('link', { name: 'Go to the overview' }).count()).toBe(1)
      expect(await page.getByRole('link', { name: 'Go to sign-in' }).count()).toBe(0)
      await shows('layout-not-found')

      // A redirect loop is said beside the field that closes it, as well as above the form.
      await page.goto('/admin/redirects/new')
      await page.getByLabel('From path').fill('/loop-there')
      await page.getByLabel('To path').fill('/loop-here')
      await page.getByRole('button', { name: 'Create redirect' }).click()
      await expect.poll(() => page.locator('#field-toPath-problem').textContent()).toContain('redirect loop')
      expect(await page.getByLabel('To path').getAttribute('aria-invalid')).toBe('true')
      expect(await page.getByRole('alert').textContent()).toContain('redirect loop')
      await shows('layout-redirect-loop')
      await context.close()
    }, 180_000)
  }

  /** The colours a reader sees: the first opaque background from the body up, and the body's text. */
  const pageColours = (page: Page) =>
    page.evaluate<{ background: string; text: string }>(`(() => {
      let element = document.body
      let background = ''
      while (element && background === '') {
        const colour = getComputedStyle(element).backgroundColor
        if (colour !== 'transparent' && !/^rgba\\(.*, 0\\)$/.test(colour)) background = colour
        element = element.parentElement
      }
      return { background, text: getComputedStyle(document.body).color }
    })()`)

  /** WCAG relative luminance of a computed `rgb(r, g, b)` colour: 0 is black, 1 white. */
  const luminance = (colour: string) => {
    const channels = colour
      .match(/\d+(\.\d+)?/g)
      ?.slice(0, 3)
      .map(Number)
    if (channels?.length !== 3) throw new Error(`not an rgb() colour: ${colour}`)
    const [r, g, b] = channels.map((value) => {
      const c = value / 255
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    }) as [number, number, number]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b
  }

  it('follows a dark colour scheme: the overview is dark with light text on a desktop and a phone, and light otherwise', async () => {
    for (const [viewport, name] of [
      [DESKTOP, 'dark-overview'],
      [PHONE, 'phone-dark-overview'],
    ] as const) {
      const context = await newContext(viewport, { colorScheme: 'dark' })
      const page = await context.newPage()
      await signIn(page, ADMIN.email, ADMIN.password)
      const { background, text } = await pageColours(page)
      expect(luminance(background)).toBeLessThan(0.05)
      expect(luminance(text)).toBeGreaterThan(0.6)
      // WCAG's contrast ratio; 7:1 is its enhanced level for body text.
      expect((luminance(text) + 0.05) / (luminance(background) + 0.05)).toBeGreaterThanOrEqual(7)
      expect(await pageWidth(page)).toBeLessThanOrEqual(viewport.width)
      await screenshot(page, name)
      await context.close()
    }
    const context = await newContext(DESKTOP, { colorScheme: 'light' })
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)
    const { background, text } = await pageColours(page)
    expect(luminance(background)).toBeGreaterThan(0.8)
    expect(luminance(text)).toBeLessThan(0.1)
    await context.close()
  }, 120_000)

  it("shows times in the reader's time zone, with the UTC time on hover", async () => {
    const context = await newContext(DESKTOP, { timezoneId: 'America/New_York', locale: 'en-US' })
    const page = await context.newPage()
    await signIn(page, ADMIN.email, ADMIN.password)
    await page.goto('/admin/audit')
    const time = page.locator('main time[datetime]').first()
    const datetime = (await time.getAttribute('datetime')) as string
    expect(datetime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
    const utcText = `${datetime.slice(0, 10)} ${datetime.slice(11, 16)} UTC`
    const shown = await time.textContent()
    expect(shown).not.toBe(utcText)
    expect(shown).not.toContain('UTC')
    // The date and the time as New York reads them, and its zone.
    const inNewYork = (options: Intl.DateTimeFormatOptions) =>
      new Intl.DateTimeFormat('en-US', { ...options, timeZone: 'America/New_York' }).format(
        new Date(datetime),
      )
    expect(shown).toContain(inNewYork({ dateStyle: 'medium' }))
    expect(shown).toContain(inNewYork({ timeStyle: 'short' }))
    expect(shown).toMatch(/ E[SD]T$/)
    expect(await time.getAttribute('title')).toBe(`${datetime.slice(0, 10)} ${datetime.slice(11, 19)} UTC`)
    await context.close()
  }, 120_000)
})
