import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { runCli } from './run-cli.js'

describe('lectern keys: expiry and renaming', () => {
  let ctx: TestContext
  const cli = (args: string[], input?: string) => runCli(args, { databaseUrl: ctx.databaseUrl, input })

  beforeEach(async () => {
    ctx = await createTestContext()
    await ctx.services.users.createUser({ email: 'admin@example.com', role: 'global_admin' })
  })
  afterEach(() => ctx.close())

  it('creates a key that expires, converted to UTC, and lists its expiry and last use', async () => {
    const created = await cli([
      'keys',
      'create',
      '--name',
      'Campaign',
      '--expires',
      '2099-06-30T12:00:00+02:00',
    ])
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toContain('expires 2099-06-30T10:00:00Z')
    expect(created.lines.at(-1)).toMatch(/^lk_live_[0-9A-Za-z]{32,}$/)

    const listed = await cli(['keys', 'list', '--json'])
    const keys = JSON.parse(listed.stdout) as Record<string, unknown>[]
    expect(keys).toEqual([
      expect.objectContaining({
        name: 'Campaign',
        status: 'active',
        expiresAt: '2099-06-30T10:00:00Z',
        lastUsedAt: null,
      }),
    ])
    const table = await cli(['keys', 'list'])
    expect(table.lines[0]).toMatch(/lastUsedAt\s+expiresAt$/)
    expect(table.lines[1]).toContain('2099-06-30T10:00:00Z')

    const [entry] = await ctx.services.audit.recent(1)
    expect(entry).toMatchObject({
      actor: 'cli',
      action: 'key.created',
      detail: { expiresAt: '2099-06-30T10:00:00Z' },
    })
  })

  it('lists an expired key as inactive, saying why, with its status still in the JSON enum', async () => {
    const { key } = await ctx.services.keys.createApiKey({ name: 'Short-lived', expiresAt: '2099-01-01' })
    await ctx.database.db
      .updateTable('api_keys')
      .set({ expires_at: '2020-01-01T00:00:00Z' })
      .where('id', '=', key.id)
      .execute()
    const table = await cli(['keys', 'list'])
    expect(table.lines[1]).toMatch(/ inactive \(expired\) .*2020-01-01T00:00:00Z \(expired\)$/)
    const [listed] = JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as object[]
    expect(listed).toMatchObject({ status: 'inactive', statusReason: 'expired', deactivated: false })
  })

  it('refuses an expiry in the past or one that is not a date-time, creating nothing', async () => {
    for (const [expires, message] of [
      ['2001-01-01T00:00:00Z', 'is in the past'],
      ['next week', 'is not an ISO 8601 date-time'],
    ]) {
      const res = await cli(['keys', 'create', '--name', 'Nope', '--expires', expires])
      expect(res.code, expires).toBe(1)
      expect(res.stderr.trim().split('\n')).toHaveLength(1)
      expect(res.stderr).toContain(message)
    }
    expect(await ctx.services.keys.listApiKeys()).toEqual([])
  })

  it('renames a key, audited as the command line, and refuses an unknown key or an empty name', async () => {
    const { key, plainKey } = await ctx.services.keys.createApiKey({ name: 'Old name' })
    const renamed = await cli(['keys', 'rename', key.id, 'New name'])
    expect(renamed.code, renamed.stderr).toBe(0)
    expect(renamed.stdout).toContain(`Renamed ${key.id} to 'New name'`)
    expect((await ctx.services.keys.findApiKey(key.id)).name).toBe('New name')
    expect((await ctx.services.keys.checkApiKey(plainKey)).status).toBe('valid')
    const [entry] = await ctx.services.audit.recent(1)
    expect(entry).toMatchObject({ actor: 'cli', action: 'key.renamed', target: key.id })

    const unknown = await cli(['keys', 'rename', 'key_missing', 'X'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("API key 'key_missing' not found")
    const empty = await cli(['keys', 'rename', key.id, ' '])
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain('Key name must be 1 to 100 characters')
  })
})
