import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NotFoundError, ValidationError } from '../../src/errors.js'
import { ImportError } from '../../src/services/import/index.js'
import { DashboardClient, signedInClient, textOf } from '../admin/support.js'
import { buildApiKey, buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'

// PostgreSQL's text type cannot hold U+0000, so each of these answered 5xx there and something else
// on SQLite. Every one is now refused at the edge, the same way on both.
describe('NUL characters at every way in', () => {
  let ctx: TestContext
  let admin: DashboardClient
  let apiKey: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    admin = (await signedInClient(ctx.app, ctx.database.db)).client
    apiKey = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  it('answers an API path holding %00 with 404 resource_not_found', async () => {
    const res = await ctx.app.inject({
      url: '/api/v1/forms/%00/submissions',
      headers: { authorization: apiKey },
    })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ error: 'resource_not_found', message: "Form '\u0000' not found" })
  })

  it('answers dashboard paths holding %00 with the 404 page', async () => {
    for (const path of [
      '/admin/forms/%00/submissions',
      '/admin/keys/%00/revoke',
      '/admin/redirects/a%00/edit',
    ]) {
      const res = await admin.get(path)
      expect(res.statusCode, path).toBe(404)
    }
    await admin.get('/admin/forms')
    const res = await admin.post('/admin/submissions/%00/read', { read: 'true', page: '1' })
    expect(res.statusCode).toBe(404)
  })

  it('refuses a sign-in email holding NUL as a wrong email, not a 503', async () => {
    const client = new DashboardClient(ctx.app)
    const res = await client.signIn('admin\u0000@example.com')
    expect(res.statusCode).toBe(401)
    expect(textOf(res)).toContain('The email or password is not right')
  })

  it('refuses a key name holding NUL beside the form', async () => {
    await admin.get('/admin/keys/new')
    const res = await admin.post('/admin/keys', { name: 'deploy\u0000bot' })
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain('Key name must not contain NUL (\\u0000) characters')
    const names = await ctx.database.db.selectFrom('api_keys').select('name').execute()
    expect(names.map((row) => row.name)).not.toContain('deploy\u0000bot')
  })

  it('refuses notes holding NUL with a message on the submission page, and keeps the old notes', async () => {
    const form = await buildForm(ctx.database.db)
    const submission = await buildSubmission(ctx.database.db, { formId: form.id, notes: 'call back' })
    await admin.get(`/admin/forms/${form.id}/submissions`)
    const res = await admin.post(`/admin/submissions/${submission.id}/notes`, {
      notes: 'a\u0000b',
      page: '1',
    })
    expect(res.statusCode).toBe(303)
    const page = await admin.get(res.headers.location as string)
    expect(textOf(page)).toContain('Notes must not contain NUL (\\u0000) characters')
    const row = await ctx.database.db
      .selectFrom('submissions')
      .select('notes')
      .where('id', '=', submission.id)
      .executeTakeFirstOrThrow()
    expect(row.notes).toBe('call back')
  })

  it('refuses user emails, key owners and key ids holding NUL, as the CLI passes them', async () => {
    const { users, keys } = ctx.services
    await expect(users.createUser({ email: 'a\u0000@example.com', role: 'viewer' })).rejects.toThrow(
      ValidationError,
    )
    await expect(users.disableUser('a\u0000@example.com')).rejects.toThrow(ValidationError)
    await expect(keys.createApiKey({ name: 'x', userEmail: 'a\u0000@example.com' })).rejects.toThrow(
      ValidationError,
    )
    await expect(keys.revokeApiKey('key_\u0000')).rejects.toThrow(NotFoundError)
    await expect(keys.deactivateApiKey('key_\u0000')).rejects.toThrow(NotFoundError)
  })

  it('refuses imported text and data holding NUL, naming the line and field', async () => {
    const file = join(ctx.dir, 'nul.ndjson')
    writeFileSync(
      file,
      [
        { kind: 'form', id: 'form_nul', title: 'Con\u0000tact' },
        { kind: 'form', id: 'form_desc', title: 'Fine', description: '\u0000' },
        { kind: 'form', id: 'form_ok', title: 'Fine' },
        { kind: 'submission', formId: 'form_ok', data: { message: 'hi\u0000' } },
        { kind: 'submission', formId: 'form_ok', data: { 'na\u0000me': 'x' } },
        { kind: 'page', title: 'P', slug: 's\u0000', path: '/p' },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    )
    const error = await ctx.services.importer.importFile(file).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ImportError)
    expect((error as ImportError).problems).toEqual([
      'line 1 (form): title must not contain NUL (\\u0000) characters',
      'line 2 (form): description must not contain NUL (\\u0000) characters',
      'line 4 (submission): data must not hold strings that contain NUL (\\u0000) characters (at message)',
      'line 5 (submission): data must not hold field names that contain NUL (\\u0000) characters',
      'line 6 (page): slug must not contain NUL (\\u0000) characters',
    ])
  })
})
