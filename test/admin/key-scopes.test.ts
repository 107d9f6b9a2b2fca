import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request } from '../security-suite.js'
import { type DashboardClient, signedInClient, textOf } from './support.js'

const KEY_IN_PAGE = /value="(lk_live_[0-9A-Za-z]+)"/

/** Posts the key form with repeated fields, as a browser sends ticked boxes and picked options. */
async function postKeyForm(admin: DashboardClient, fields: [string, string][]) {
  await admin.get('/admin/keys/new')
  return admin.request({
    method: 'POST',
    url: '/admin/keys',
    payload: new URLSearchParams([['_csrf', admin.csrf], ['scopesShown', 'true'], ...fields]).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
}

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

  const post = (fields: [string, string][]) => postKeyForm(admin, fields)
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
    // Every form is in the list: no field for ids, and no word of a cut list.
    expect(res.body).not.toContain('name="formIds"')
    expect(textOf(res)).not.toContain('The list shows the first')
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
    [[['name', 'No scope']] as [string, string][], 'Give at least one scope', 'scopes'],
    [
      [
        ['name', 'Forms without submissions'],
        ['scopes', 'pages:read'],
        ['forms', 'form_contact000000000000'],
      ] as [string, string][],
      "Forms narrow only the 'submissions:read' permission",
      'forms',
    ],
    [
      [
        ['name', 'Unknown form'],
        ['scopes', 'submissions:read'],
        ['forms', 'form_gone000000000000000'],
      ] as [string, string][],
      "Unknown form 'form_gone000000000000000'",
      'forms',
    ],
  ])(
    'refuses a key form that would grant nothing or names no form (%#), keeping the choices, and says why beside the choice at fault',
    async (fields, problem, field) => {
      const res = await post(fields)
      expect(res.statusCode).toBe(422)
      expect(textOf(res)).toContain(problem)
      expect(res.body).not.toMatch(/name="scopes" value="forms:read" checked/)
      // Beside its field, which names it and is marked invalid; the other field is not.
      const other = field === 'scopes' ? 'forms' : 'scopes'
      expect(res.body).toMatch(
        new RegExp(`<p class="field-problem" id="field-${field}-problem">[^<]*${problem.slice(0, 12)}`),
      )
      expect(res.body).toMatch(
        new RegExp(
          `(<fieldset|<select id="field-forms")[^>]*aria-describedby="field-${field}-hint field-${field}-problem" aria-invalid="true"`,
        ),
      )
      expect(res.body).not.toContain(`id="field-${other}-problem"`)
    },
  )
})

describe('Organization → API keys: forms beyond the picker on a site with more than 1,000 forms', () => {
  let ctx: TestContext
  let admin: DashboardClient
  /** Titled to sort after the 1,000 forms the picker lists. */
  const BEYOND = 'form_zebra00000000000000'
  const ALSO_BEYOND = 'form_zulu000000000000000'
  /** Listed first and second by title. */
  const LISTED = 'form_aardvark00000000000'
  const ALSO_LISTED = 'form_badger0000000000000'

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    admin = (await signedInClient(ctx.app, ctx.database.db)).client
    await ctx.database.db.transaction().execute(async (trx) => {
      await buildForm(trx, { id: LISTED, title: 'Aardvark survey' })
      await buildForm(trx, { id: ALSO_LISTED, title: 'Badger count' })
      for (let n = 0; n < 999; n++) await buildForm(trx, { title: `Form ${String(n).padStart(4, '0')}` })
      await buildForm(trx, { id: BEYOND, title: 'Zebra survey' })
      await buildForm(trx, { id: ALSO_BEYOND, title: 'Zulu poll' })
    })
    await buildSubmission(ctx.database.db, { formId: BEYOND, data: { email: 'zed@example.com' } })
  })
  afterAll(() => ctx.close())

  const post = (fields: [string, string][]) => postKeyForm(admin, [['scopes', 'submissions:read'], ...fields])

  it("says the list shows the first 1,000 forms by title and offers a labelled field for any form's id", async () => {
    const res = await admin.get('/admin/keys/new')
    expect(res.body.match(/<option /g)).toHaveLength(1000)
    expect(res.body).toContain(`<option value="${ALSO_LISTED}"`)
    expect(res.body).not.toContain(`<option value="${BEYOND}"`)
    expect(textOf(res)).toContain('The list shows the first 1,000 forms by title')
    expect(res.body).toContain('<label for="field-formIds">')
    expect(res.body).toMatch(
      /<input id="field-formIds" name="formIds" type="text" value=""[^>]*aria-describedby="field-formIds-hint"/,
    )
  })

  it('creates a key narrowed to forms beyond the list by their ids, which the API then holds it to, and audits the forms', async () => {
    const res = await post([
      ['name', 'Zoo sync'],
      ['forms', LISTED],
      ['formIds', ` ${BEYOND},${ALSO_BEYOND}  ${BEYOND} `],
    ])
    expect(res.statusCode).toBe(303)
    const plainKey = KEY_IN_PAGE.exec((await admin.get('/admin/keys/created')).body)?.[1] as string
    const key = (await ctx.services.keys.listApiKeys()).find((k) => k.name === 'Zoo sync')
    expect(key).toMatchObject({ scopes: ['submissions:read'], forms: [LISTED, BEYOND, ALSO_BEYOND] })

    const auth = `Bearer ${plainKey}`
    const read = expectList<{ formId: string }>(
      await request(ctx.app, `/api/v1/forms/${BEYOND}/submissions`, auth),
    )
    expect(read.data).toHaveLength(1)
    expectError(
      await request(ctx.app, `/api/v1/forms/${ALSO_LISTED}/submissions`, auth),
      403,
      'insufficient_permissions',
    )

    const [entry] = (await ctx.services.audit.list({ action: 'key.created' }, { page: 1, pageSize: 5 })).items
    expect(entry).toMatchObject({ target: key?.id, detail: { forms: [LISTED, BEYOND, ALSO_BEYOND] } })
  })

  it('refuses an unknown form id in the field and creates no key, keeping what was typed and picked', async () => {
    const before = (await ctx.services.keys.listApiKeys()).length
    const res = await post([
      ['name', 'Typo'],
      ['forms', LISTED],
      ['formIds', `${BEYOND}, form_gone000000000000000 "<b>`],
    ])
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain(`Unknown forms 'form_gone000000000000000', '"<b>'`)
    // Said beside the ids typed, where the unknown ones are; the list keeps its picks, unmarked.
    expect(res.body).toMatch(
      /<p class="field-problem" id="field-formIds-problem">Unknown forms &#39;form_gone/,
    )
    expect(res.body).toMatch(
      /<input id="field-formIds" name="formIds"[^>]*aria-describedby="field-formIds-hint field-formIds-problem" aria-invalid="true"/,
    )
    expect(res.body).not.toContain('id="field-forms-problem"')
    expect(res.body).toContain(`value="${BEYOND}, form_gone000000000000000 &quot;&lt;b&gt;"`)
    expect(res.body).toContain(`<option value="${LISTED}" selected>`)
    expect(res.body).not.toContain('<b>')
    expect(await ctx.services.keys.listApiKeys()).toHaveLength(before)
  })
})
