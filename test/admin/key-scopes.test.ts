import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request } from '../security-suite.js'
import { type DashboardClient, signedInClient, textOf } from './support.js'

const KEY_IN_PAGE = /value="(lk_live_[0-9A-Za-z]+)"/

describe('Organization → API keys: scopes and forms', () => {
  let ctx: TestContext
  let admin: DashboardClient

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    admin = (await signedInClient(ctx.app, ctx.database.db)).client
    await buildForm(ctx.database.db, { id: 'form_newsletter0000000', title: 'Newsletter <sign-up>' })
    await buildForm(ctx.database.db, { id: 'form_contact000000000000', title: 'Contact' })
  })
  afterAll(() => ctx.close())

  /** Posts the key form with repeated fields, as a browser sends ticked boxes and picked options. */
  const post = async (fields: [string, string][]) => {
    await admin.get('/admin/keys/new')
    return admin.request({
      method: 'POST',
      url: '/admin/keys',
      payload: new URLSearchParams([['_csrf', admin.csrf], ['scopesShown', 'true'], ...fields]).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
  }
  /** The key the "created" page shows once, and the path of its example request. */
  const createdPage = async () => {
    const res = await admin.get('/admin/keys/created')
    return {
      plainKey: KEY_IN_PAGE.exec(res.body)?.[1] as string,
      example: / http:\/\/[^/\s]+(\/api\/v1\/[^<\s]*)<\/code>/.exec(res.body)?.[1],
    }
  }
  const created = async () => (await createdPage()).plainKey

  it("offers one checkbox per permission of the admin's role, all ticked, and the forms to pick, escaped", async () => {
    const res = await admin.get('/admin/keys/new')
    for (const permission of ['forms:read', 'submissions:read', 'pages:read', 'redirects:read'])
      expect(res.body).toMatch(new RegExp(`name="scopes" value="${permission}" checked`))
    expect(res.body).toContain('<select id="field-forms" name="forms" multiple')
    expect(res.body).toContain('Newsletter &lt;sign-up&gt; (form_newsletter0000000)')
  })

  it('creates an unscoped key when every box stays ticked', async () => {
    const res = await post([
      ['name', 'Everything'],
      ...['forms:read', 'submissions:read', 'pages:read', 'redirects:read'].map((p): [string, string] => [
        'scopes',
        p,
      ]),
    ])
    expect(res.statusCode).toBe(303)
    await created()
    const key = (await ctx.services.keys.listApiKeys()).find((k) => k.name === 'Everything')
    expect(key).toMatchObject({ scopes: null, forms: null })
  })

  it.each([
    [[['scopes', 'pages:read']], '/api/v1/page-builder'],
    [[['scopes', 'redirects:read']], '/api/v1/page-builder/redirects'],
    [
      [
        ['scopes', 'submissions:read'],
        ['forms', 'form_contact000000000000'],
      ],
      '/api/v1/forms/form_contact000000000000/submissions',
    ],
    [[['scopes', 'forms:read']], '/api/v1/forms'],
  ])('shows a new key with an example request it may make (%j)', async (fields, path) => {
    expect((await post([['name', 'Example'], ...fields] as [string, string][])).statusCode).toBe(303)
    const { plainKey, example } = await createdPage()
    expect(example).toBe(path)
    expect((await request(ctx.app, path, `Bearer ${plainKey}`)).statusCode).toBe(200)
  })

  it('creates a key narrowed to the boxes ticked and the forms picked, which the API then holds it to', async () => {
    const res = await post([
      ['name', 'CRM sync'],
      ['scopes', 'submissions:read'],
      ['forms', 'form_contact000000000000'],
    ])
    expect(res.statusCode).toBe(303)
    const plainKey = await created()
    const key = (await ctx.services.keys.listApiKeys()).find((k) => k.name === 'CRM sync')
    expect(key).toMatchObject({ scopes: ['submissions:read'], forms: ['form_contact000000000000'] })
    const auth = `Bearer ${plainKey}`
    expectList(await request(ctx.app, '/api/v1/forms/form_contact000000000000/submissions', auth))
    expectError(
      await request(ctx.app, '/api/v1/forms/form_newsletter0000000/submissions', auth),
      403,
      'insufficient_permissions',
    )
    expectError(await request(ctx.app, '/api/v1/forms', auth), 403, 'insufficient_permissions')

    const page = textOf(await admin.get(`/admin/keys/${key?.id}`))
    expect(page).toMatch(/May read Submissions \(personal data\) \( submissions:read \) May not read/)
    expect(page).toContain('forms:read : not in its scopes')
    expect(page).toContain('Submissions of Contact ( form_contact000000000000 )')
  })

  it('says on the page of a key that its owner lost a permission the role no longer gives', async () => {
    const { client, user } = await signedInClient(ctx.app, ctx.database.db)
    await client.get('/admin/keys/new')
    const res = await client.post('/admin/keys', { name: 'Demoted later' })
    expect(res.statusCode).toBe(303)
    const key = (await ctx.services.keys.listApiKeys()).find((k) => k.name === 'Demoted later')
    await ctx.database.db.updateTable('users').set({ role: 'viewer' }).where('id', '=', user.id).execute()
    const page = textOf(await admin.get(`/admin/keys/${key?.id}`))
    expect(page).toContain("submissions:read : not in its owner's role")
    expect(page).toContain('May read Pages ( pages:read ), Redirects ( redirects:read )')
  })

  it.each([
    [[['name', 'No scope']] as [string, string][], 'Give at least one scope'],
    [
      [
        ['name', 'Forms without submissions'],
        ['scopes', 'pages:read'],
        ['forms', 'form_contact000000000000'],
      ] as [string, string][],
      "Forms narrow only the 'submissions:read' permission",
    ],
    [
      [
        ['name', 'Unknown form'],
        ['scopes', 'submissions:read'],
        ['forms', 'form_gone000000000000000'],
      ] as [string, string][],
      "Unknown form 'form_gone000000000000000'",
    ],
  ])(
    'refuses a key form that would grant nothing or names no form (%#), keeping the choices',
    async (fields, problem) => {
      const res = await post(fields)
      expect(res.statusCode).toBe(422)
      expect(textOf(res)).toContain(problem)
      expect(res.body).not.toMatch(/name="scopes" value="forms:read" checked/)
    },
  )
})
