import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { expectError, expectList, request } from '../security-suite.js'
import { runCli } from './run-cli.js'

describe('lectern keys: scopes and forms', () => {
  let ctx: TestContext
  const cli = (args: string[]) => runCli(args, { databaseUrl: ctx.databaseUrl })

  beforeAll(async () => {
    ctx = await createTestContext()
    await ctx.services.users.createUser({ email: 'admin@example.com', role: 'global_admin' })
    await buildForm(ctx.database.db, { id: 'form_contact000000000000' })
    await buildForm(ctx.database.db, { id: 'form_newsletter0000000' })
  })
  afterAll(() => ctx.close())

  it('creates a narrowed key, lists its scopes and forms, audits them, and the API holds it to them', async () => {
    const created = await cli([
      'keys',
      'create',
      '--name',
      'CRM sync',
      '--scopes',
      'submissions:read,forms:read',
      '--forms',
      'form_contact000000000000',
    ])
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toContain(
      'It may: forms:read, submissions:read; submissions of form_contact000000000000 only',
    )
    const auth = `Bearer ${created.lines.at(-1)}`

    const listed = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as Record<string, unknown>[]
    expect(listed).toEqual([
      expect.objectContaining({
        name: 'CRM sync',
        scopes: ['forms:read', 'submissions:read'],
        forms: ['form_contact000000000000'],
      }),
    ])
    const table = await cli(['keys', 'list'])
    expect(table.lines[0]).toMatch(/status\s+scopes\s+forms\s+createdBy/)
    expect(table.lines[1]).toContain('forms:read,submissions:read  form_contact000000000000')

    const [entry] = await ctx.database.db
      .selectFrom('audit_log')
      .select('detail')
      .where('action', '=', 'key.created')
      .execute()
    expect(JSON.parse(entry?.detail as string)).toMatchObject({
      scopes: ['forms:read', 'submissions:read'],
      forms: ['form_contact000000000000'],
    })

    expectList(await request(ctx.app, '/api/v1/forms', auth))
    expectList(await request(ctx.app, '/api/v1/forms/form_contact000000000000/submissions', auth))
    const refused = expectError(
      await request(ctx.app, '/api/v1/forms/form_newsletter0000000/submissions', auth),
      403,
      'insufficient_permissions',
    )
    expect(refused.message).toContain("'form_newsletter0000000'")
    const page = expectError(
      await request(ctx.app, '/api/v1/page-builder', auth),
      403,
      'insufficient_permissions',
    )
    expect(page.message).toContain("'pages:read'")
  })

  it('lists a key without scopes as all of them, null in the JSON', async () => {
    expect((await cli(['keys', 'create', '--name', 'Everything'])).code).toBe(0)
    const listed = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as Record<string, unknown>[]
    expect(listed.find((key) => key.name === 'Everything')).toMatchObject({ scopes: null, forms: null })
  })

  it.each([
    [['--scopes', 'pages:write'], "Unknown scope 'pages:write'"],
    [['--scopes', ','], 'Give at least one scope'],
    [['--forms', 'form_gone000000000000000'], "Unknown form 'form_gone000000000000000'"],
    [
      ['--scopes', 'pages:read', '--forms', 'form_contact000000000000'],
      "Forms narrow only the 'submissions:read' permission",
    ],
  ])('refuses %j with a clear error, creating nothing', async (args, problem) => {
    const before = (await ctx.services.keys.listApiKeys()).length
    const res = await cli(['keys', 'create', '--name', 'Refused', ...args])
    expect(res.code).not.toBe(0)
    expect(res.stderr).toContain(problem)
    expect(await ctx.services.keys.listApiKeys()).toHaveLength(before)
  })

  it('creates keys for global admins only, so no scope can exceed the owner’s role at creation', async () => {
    const editor = await ctx.services.users.createUser({ email: 'editor@example.com', role: 'editor' })
    expect(editor).toBeDefined()
    // Only global admins own keys; a key of an admin later demoted keeps its scopes but gains nothing.
    await expect(
      ctx.services.keys.createApiKey({
        name: 'Editor',
        userEmail: 'editor@example.com',
        scopes: ['forms:read'],
      }),
    ).rejects.toThrow('Only a global admin can create API keys')
  })

  it('says what --scopes and --forms do in the help', async () => {
    const help = await cli(['keys', 'create', '--help'])
    expect(help.stdout).toContain('--scopes <permissions>')
    expect(help.stdout).toContain('forms:read,submissions:read,pages:read,redirects:read')
    expect(help.stdout).toContain('--forms <ids>')
  })
})
