import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildForm, buildSubmission, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { runCliProcess } from './run-cli.js'

/**
 * The server (this process) and the CLI (a child process) share one SQLite file, as they do in
 * production: every change the CLI makes must show on the server's very next request. One database
 * for the file; each test has its own creator and a key the CLI created for them.
 */
describe('changes made by the CLI in another process', () => {
  let ctx: TestContext
  let email: string
  let key: string
  let keyId: string
  const cli = (args: string[]) => runCliProcess(args, { databaseUrl: ctx.databaseUrl })
  const get = (url: string) => ctx.app.inject({ url, headers: { authorization: `Bearer ${key}` } })

  beforeAll(async () => {
    ctx = await createTestContext()
    // Another global admin, so that the creators can be demoted, disabled and deleted.
    await buildUser(ctx.database.db, { email: 'backup@example.com', role: 'global_admin' })
    const form = await buildForm(ctx.database.db, { id: 'form_contact' })
    await buildSubmission(ctx.database.db, { formId: form.id })
  })
  afterAll(() => ctx.close())

  beforeEach(async () => {
    email = (await buildUser(ctx.database.db, { role: 'global_admin' })).email
    const created = await cli(['keys', 'create', '--name', 'site', '--user', email])
    expect(created.code, created.stderr).toBe(0)
    key = created.lines.at(-1) as string
    keyId = /Created API key (\S+) /.exec(created.stdout + created.stderr)?.[1] as string
    expect(keyId).toBeDefined()
  })

  it('refuses a key revoked by the CLI on the very next request', async () => {
    expect((await get('/api/v1/forms')).statusCode).toBe(200)
    expect((await cli(['keys', 'revoke', keyId])).code).toBe(0)
    const res = await get('/api/v1/forms')
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({ error: 'invalid_api_key', message: expect.any(String) })
  })

  it('refuses a deactivated key and accepts it again once activated', async () => {
    expect((await cli(['keys', 'deactivate', keyId])).code).toBe(0)
    const inactive = await get('/api/v1/forms')
    expect(inactive.statusCode).toBe(401)
    expect(inactive.json().error).toBe('api_key_inactive')
    expect((await cli(['keys', 'activate', keyId])).code).toBe(0)
    expect((await get('/api/v1/forms')).statusCode).toBe(200)
  })

  it('narrows a key as soon as its creator is demoted, and widens it again on promotion', async () => {
    expect((await get('/api/v1/forms/form_contact/submissions')).statusCode).toBe(200)
    await cli(['users', 'set-role', email, 'editor'])
    const denied = await get('/api/v1/forms/form_contact/submissions')
    expect(denied.statusCode).toBe(403)
    expect(denied.json().error).toBe('insufficient_permissions')
    expect((await get('/api/v1/forms')).statusCode).toBe(200)
    await cli(['users', 'set-role', email, 'viewer'])
    expect((await get('/api/v1/forms')).statusCode).toBe(403)
    expect((await get('/api/v1/page-builder')).statusCode).toBe(200)
    await cli(['users', 'set-role', email, 'global_admin'])
    expect((await get('/api/v1/forms/form_contact/submissions')).statusCode).toBe(200)
  })

  it('stops the keys of a disabled creator, and of a deleted one for good', async () => {
    await cli(['users', 'disable', email])
    expect((await get('/api/v1/forms')).json().error).toBe('api_key_inactive')
    await cli(['users', 'enable', email])
    expect((await get('/api/v1/forms')).statusCode).toBe(200)
    await cli(['users', 'delete', email])
    expect((await get('/api/v1/forms')).json().error).toBe('invalid_api_key')
    const keys = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as {
      id: string
      status: string
      createdBy: string | null
    }[]
    expect(keys.find((listed) => listed.id === keyId)).toMatchObject({ status: 'revoked', createdBy: null })
  })
})
