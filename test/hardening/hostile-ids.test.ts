import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { html, raw, SafeHtml, url } from '../../src/html.js'
import { idProblem, isSafeId } from '../../src/ids.js'
import { ImportError } from '../../src/services/import/index.js'
import { type DashboardClient, signedInClient } from '../admin/support.js'
import { buildApiKey, buildForm, buildSubmission, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'

/** Every `action` and `href` of a page, as the browser would read them (entities decoded). */
function addresses(body: string): string[] {
  return [...body.matchAll(/(?:action|href)="([^"]*)"/g)].map((match) =>
    (match[1] as string)
      .replace(/&amp;/g, '&')
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"'),
  )
}

describe('ids that try to change where dashboard buttons post', () => {
  let ctx: TestContext
  let admin: DashboardClient
  let victim: { id: string; email: string }
  let apiKey: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    admin = (await signedInClient(ctx.app, ctx.database.db)).client
    victim = await buildUser(ctx.database.db, { role: 'editor' })
    apiKey = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  const importNdjson = async (name: string, lines: unknown[]) => {
    const file = join(ctx.dir, name)
    writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`)
    return ctx.services.importer.importFile(file).then(
      () => undefined,
      (error: unknown) => error,
    )
  }

  it('refuses to import a submission whose id would disable a user, naming its line', async () => {
    const error = await importNdjson('attack.ndjson', [
      { kind: 'form', id: 'form_contact', title: 'Contact' },
      { kind: 'submission', id: `../users/${victim.id}/disable?`, formId: 'form_contact', data: {} },
    ])
    expect(error).toBeInstanceOf(ImportError)
    expect((error as ImportError).problems).toEqual([
      `line 2 (submission): id may hold only letters A–Z and a–z, digits, and _ . : - (got "../users/${victim.id}/disable?")`,
    ])
    const rows = await ctx.database.db.selectFrom('submissions').select('id').execute()
    expect(rows).toEqual([])
  })

  it('refuses an id with non-ASCII characters with a located error rather than a 500', async () => {
    const error = await importNdjson('accents.ndjson', [{ kind: 'form', id: 'formulaire_été', title: 'Été' }])
    expect(error).toBeInstanceOf(ImportError)
    expect((error as ImportError).problems).toEqual([
      'line 1 (form): id may hold only letters A–Z and a–z, digits, and _ . : - (got "formulaire_été")',
    ])
  })

  it('refuses a form id outside the alphabet in a submission, and the ids . and ..', async () => {
    const error = await importNdjson('refs.ndjson', [
      { kind: 'form', id: '..', title: 'Dots' },
      { kind: 'submission', formId: 'form/../x', data: {} },
    ])
    expect((error as ImportError).problems).toEqual([
      "line 1 (form): id must not be '..'",
      'line 2 (submission): formId may hold only letters A–Z and a–z, digits, and _ . : - (got "form/../x")',
    ])
  })

  it('encodes a hostile id already in the database in every dashboard address, so no button reaches another route', async () => {
    const form = await buildForm(ctx.database.db, { id: 'form_hostile' })
    const hostile = `../users/${victim.id}/disable?`
    await buildSubmission(ctx.database.db, { formId: form.id, id: hostile })

    const page = await admin.get('/admin/forms/form_hostile/submissions')
    expect(page.statusCode).toBe(200)
    const encoded = encodeURIComponent(hostile)
    // Every address naming the submission keeps its id in one encoded path segment.
    const actions = addresses(page.body).filter((address) => address.startsWith('/admin/submissions/'))
    expect(actions.length).toBeGreaterThanOrEqual(3)
    const prefix = `/admin/submissions/${encoded}/`
    for (const action of actions) {
      expect(action.startsWith(prefix), action).toBe(true)
      expect(action.slice(prefix.length)).toMatch(/^[a-z]+(\?[^/]*)?$/)
    }
    expect(page.body).not.toContain(`/admin/users/${victim.id}/disable`)

    // Pressing "Mark as read" posts to the encoded address: one path segment, which names nothing.
    const pressed = await admin.post(`/admin/submissions/${encoded}/read`, { read: 'true', page: '1' })
    expect(pressed.statusCode).toBe(404)
    const after = await ctx.database.db
      .selectFrom('users')
      .select('is_disabled')
      .where('id', '=', victim.id)
      .executeTakeFirstOrThrow()
    expect(after.is_disabled).toBe(0)
  })

  it('answers a dashboard address holding a non-ASCII id stored in the database, without a 500', async () => {
    const form = await buildForm(ctx.database.db, { id: 'form_ümlaut' })
    await buildSubmission(ctx.database.db, { formId: form.id, id: 'submission_ü' })
    const list = await admin.get('/admin/forms')
    expect(list.statusCode).toBe(200)
    expect(addresses(list.body)).toContain('/admin/forms/form_%C3%BCmlaut/submissions')
    expect(addresses(list.body)).toContain('/admin/forms/form_%C3%BCmlaut/active')

    const page = await admin.get('/admin/forms/form_%C3%BCmlaut/submissions')
    expect(page.statusCode).toBe(404)
    const pressed = await admin.post('/admin/forms/form_%C3%BCmlaut/active', { active: 'false', page: '1' })
    expect(pressed.statusCode).toBe(404)
  })

  it('sends every redirect Location of the dashboard encoded', async () => {
    const form = await buildForm(ctx.database.db, { id: 'form:plain' })
    const submission = await buildSubmission(ctx.database.db, { formId: form.id, id: 'submission.one' })
    await admin.get(`/admin/forms/${form.id}/submissions`)
    const res = await admin.post(`/admin/submissions/${submission.id}/star`, { starred: 'true', page: '1' })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(
      '/admin/forms/form%3Aplain/submissions?page=1&changed=submission.one#submission-submission.one',
    )
  })

  it('answers an API path id outside the alphabet with 404 resource_not_found', async () => {
    for (const id of ['%00', '..%2Fusers', 'form_%C3%BC', 'x'.repeat(129), '%2E%2E']) {
      const res = await ctx.app.inject({
        url: `/api/v1/forms/${id}/submissions`,
        headers: { authorization: apiKey },
      })
      expect(res.statusCode, id).toBe(404)
      expect(res.json().error, id).toBe('resource_not_found')
    }
  })
})

describe('the id alphabet and the url template', () => {
  it('accepts generated-looking ids and refuses everything that could leave a path segment', () => {
    for (const id of ['form_3kTq', 'a', 'x.y:z-1_2', 'A'.repeat(128)]) expect(isSafeId(id), id).toBe(true)
    for (const id of ['', '.', '..', 'a/b', 'a?b', 'a#b', 'a%2Fb', 'a b', 'ü', 'a\u0000', 'A'.repeat(129)]) {
      expect(isSafeId(id), id).toBe(false)
      expect(idProblem(id), id).not.toBeNull()
    }
  })

  it('encodes each interpolated part of an address, and html leaves the result as one attribute value', () => {
    const address = url`/admin/submissions/${'../users/u1/disable?x=1#y'}/read`
    expect(address.value).toBe('/admin/submissions/..%2Fusers%2Fu1%2Fdisable%3Fx%3D1%23y/read')
    expect(html`<a href="${url`/a?page=${2}&q=${'"<x>'}`}">`.value).toBe(
      '<a href="/a?page=2&amp;q=%22%3Cx%3E">',
    )
    expect(() => url`https://evil.example/${'x'}`).toThrow(TypeError)
    expect(() => url`//evil.example/${'x'}`).toThrow(TypeError)
  })

  it('makes SafeHtml only through html and raw, never by calling its constructor', () => {
    expect(() => Reflect.construct(SafeHtml, ['<script>alert(1)</script>'])).toThrow(TypeError)
    expect(html`${raw('<b>kept</b>')}${'<b>escaped</b>'}`.value).toBe('<b>kept</b>&lt;b&gt;escaped&lt;/b&gt;')
  })
})
