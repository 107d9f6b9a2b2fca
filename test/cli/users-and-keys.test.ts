import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { runCli, runCliProcess } from './run-cli.js'

const KEY_LINE = /^lk_live_[0-9A-Za-z]{32,}$/

describe('lectern users and keys', () => {
  let ctx: TestContext
  const cli = (args: string[], input?: string) => runCli(args, { databaseUrl: ctx.databaseUrl, input })

  beforeEach(async () => {
    ctx = await createTestContext()
  })
  afterEach(() => ctx.close())

  it('creates a user with the password piped on stdin and lists it', async () => {
    const created = await cli(
      ['users', 'create', '--email', 'Ada@Example.com', '--role', 'editor'],
      'correct horse battery\n',
    )
    expect(created.code).toBe(0)
    expect(created.stdout).toContain('ada@example.com')
    expect(created.stdout).not.toContain('Password')

    const listed = await cli(['users', 'list', '--json'])
    expect(listed.code).toBe(0)
    const users = JSON.parse(listed.stdout) as { email: string; role: string; status: string }[]
    expect(users).toEqual([
      expect.objectContaining({ email: 'ada@example.com', role: 'editor', status: 'active' }),
    ])
  })

  it('generates and prints a password when none is piped', async () => {
    const created = await cli(['users', 'create', '--email', 'grace@example.com', '--role', 'global_admin'])
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/Password \(shown once\): [0-9A-Za-z]{20}/)
    const row = await ctx.database.db.selectFrom('users').select('password_hash').executeTakeFirstOrThrow()
    expect(row.password_hash).toMatch(/^scrypt\$/)
    expect(row.password_hash).not.toContain(created.stdout.split(': ').pop()?.trim())
  })

  it('changes roles, disables, enables and deletes users', async () => {
    await cli(['users', 'create', '--email', 'admin@example.com', '--role', 'global_admin'])
    await cli(['users', 'create', '--email', 'ed@example.com', '--role', 'editor'])
    expect((await cli(['users', 'set-role', 'ed@example.com', 'viewer'])).code).toBe(0)
    expect((await cli(['users', 'disable', 'ed@example.com'])).code).toBe(0)
    let users = JSON.parse((await cli(['users', 'list', '--json'])).stdout) as {
      email: string
      role: string
      status: string
    }[]
    expect(users.find((u) => u.email === 'ed@example.com')).toMatchObject({
      role: 'viewer',
      status: 'disabled',
    })
    expect((await cli(['users', 'enable', 'ed@example.com'])).code).toBe(0)
    expect((await cli(['users', 'delete', 'ed@example.com'])).code).toBe(0)
    users = JSON.parse((await cli(['users', 'list', '--json'])).stdout)
    expect(users.map((u) => u.email)).toEqual(['admin@example.com'])
  })

  it('fails with one clear line for an unknown role, a duplicate email or an unknown user', async () => {
    const badRole = await cli(['users', 'create', '--email', 'x@example.com', '--role', 'owner'])
    expect(badRole.code).not.toBe(0)
    expect(badRole.stderr.trim().split('\n')).toHaveLength(1)
    expect(badRole.stderr).toContain("Unknown role 'owner'")

    await cli(['users', 'create', '--email', 'x@example.com', '--role', 'viewer'])
    const duplicate = await cli(['users', 'create', '--email', 'X@example.com', '--role', 'viewer'])
    expect(duplicate.code).not.toBe(0)
    expect(duplicate.stderr).toContain('already exists')

    const unknown = await cli(['users', 'disable', 'nobody@example.com'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr.trim()).toMatch(/^lectern: User 'nobody@example\.com' not found \(database \S+\)$/)
  })

  it('lists a disabled owner’s key as inactive, saying why, as the API answers it over HTTP', async () => {
    await cli(['users', 'create', '--email', 'admin@example.com', '--role', 'global_admin'])
    await cli(['users', 'create', '--email', 'owner@example.com', '--role', 'global_admin'])
    const created = await cli(['keys', 'create', '--name', 'Website', '--user', 'owner@example.com'])
    const plainKey = created.lines.at(-1)
    const { id } = await ctx.services.keys.findApiKey(created.stdout.match(/(key_\w+)/)?.[1] ?? '')
    await cli(['keys', 'create', '--name', 'Paused', '--user', 'owner@example.com'])
    const paused = (await ctx.services.keys.listApiKeys()).find((key) => key.name === 'Paused')
    expect((await cli(['keys', 'deactivate', paused?.id ?? ''])).code).toBe(0)
    expect((await cli(['users', 'disable', 'owner@example.com'])).code).toBe(0)

    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = ctx.app.server.address() as AddressInfo
    const answer = await fetch(`http://127.0.0.1:${port}/api/v1/forms`, {
      headers: { authorization: `Bearer ${plainKey}` },
    })
    expect(answer.status).toBe(401)
    expect(((await answer.json()) as { error: string }).error).toBe('api_key_inactive')

    // Both keys were made in the same second: the list's order between them is not fixed.
    const byName = async () =>
      new Map(
        (JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as { name: string }[]).map((key) => [
          key.name,
          key,
        ]),
      )
    const listed = await byName()
    expect(listed.get('Website')).toMatchObject({
      id,
      status: 'inactive',
      statusReason: 'owner disabled',
      deactivated: false,
    })
    expect(listed.get('Paused')).toMatchObject({
      status: 'inactive',
      statusReason: 'deactivated, owner disabled',
      deactivated: true,
    })
    const table = await cli(['keys', 'list'])
    expect(table.lines.find((line) => line.includes(' Website '))).toMatch(
      /^key_\w+\s+Website\s+lk_live_\w{4}\s+inactive \(owner disabled\)\s+all\s+all\s+owner@/,
    )

    expect((await cli(['users', 'enable', 'owner@example.com'])).code).toBe(0)
    const enabled = await byName()
    expect(enabled.get('Website')).toMatchObject({ status: 'active', statusReason: null })
    expect(enabled.get('Paused')).toMatchObject({ status: 'inactive', statusReason: 'deactivated' })
  })

  it('refuses to demote, disable or delete the last enabled global admin', async () => {
    await cli(['users', 'create', '--email', 'admin@example.com', '--role', 'global_admin'])
    for (const args of [
      ['users', 'set-role', 'admin@example.com', 'editor'],
      ['users', 'disable', 'admin@example.com'],
      ['users', 'delete', 'admin@example.com'],
    ]) {
      const result = await cli(args)
      expect(result.code).not.toBe(0)
      expect(result.stderr).toContain('last enabled global admin')
    }
  })

  // A process test: scripts take the key from the binary's stdout (`| tail -n 1`), so this proves
  // the built `users create`, `keys create` and `keys list` end to end, exit status and streams.
  it('prints the plain key alone on the last stdout line and stores only its hash', async () => {
    const processCli = (args: string[]) => runCliProcess(args, { databaseUrl: ctx.databaseUrl })
    expect(
      (await processCli(['users', 'create', '--email', 'admin@example.com', '--role', 'global_admin'])).code,
    ).toBe(0)
    const created = await processCli(['keys', 'create', '--name', 'Website'])
    expect(created.code).toBe(0)
    expect(created.stderr).toMatch(/^Wrote to \S+\n$/)
    const key = created.lines.at(-1) as string
    expect(key).toMatch(KEY_LINE)

    const row = await ctx.database.db.selectFrom('api_keys').selectAll().executeTakeFirstOrThrow()
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(row)).not.toContain(key)
    expect(key.startsWith(row.prefix)).toBe(true)

    const listed = await processCli(['keys', 'list', '--json'])
    expect(listed.code).toBe(0)
    expect(listed.stdout).not.toContain(key)
    const [item] = JSON.parse(listed.stdout) as Record<string, unknown>[]
    expect(item).toMatchObject({
      id: row.id,
      name: 'Website',
      prefix: row.prefix,
      status: 'active',
      createdBy: 'admin@example.com',
      lastUsedAt: null,
    })
    expect(item.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
  })

  it('needs --user when several global admins exist and refuses non-admin owners', async () => {
    await cli(['users', 'create', '--email', 'a@example.com', '--role', 'global_admin'])
    await cli(['users', 'create', '--email', 'b@example.com', '--role', 'global_admin'])
    await cli(['users', 'create', '--email', 'ed@example.com', '--role', 'editor'])

    const ambiguous = await cli(['keys', 'create', '--name', 'k'])
    expect(ambiguous.code).not.toBe(0)
    expect(ambiguous.stderr).toContain('--user')

    const editor = await cli(['keys', 'create', '--name', 'k', '--user', 'ed@example.com'])
    expect(editor.code).not.toBe(0)
    expect(editor.stderr).toContain('Only a global admin')

    const named = await cli(['keys', 'create', '--name', 'k', '--user', 'b@example.com'])
    expect(named.code).toBe(0)
    expect(named.lines.at(-1)).toMatch(KEY_LINE)
  })

  it('deactivates, activates and revokes keys, and a revoked key stays revoked', async () => {
    await cli(['users', 'create', '--email', 'admin@example.com', '--role', 'global_admin'])
    await cli(['keys', 'create', '--name', 'k'])
    const { id } = (await ctx.services.keys.listApiKeys())[0]
    const status = async () =>
      (JSON.parse((await cli(['keys', 'list', '--json'])).stdout) as { status: string }[])[0].status

    expect((await cli(['keys', 'deactivate', id])).code).toBe(0)
    expect(await status()).toBe('inactive')
    expect((await cli(['keys', 'activate', id])).code).toBe(0)
    expect(await status()).toBe('active')
    expect((await cli(['keys', 'revoke', id])).code).toBe(0)
    expect(await status()).toBe('revoked')
    const reactivate = await cli(['keys', 'activate', id])
    expect(reactivate.code).not.toBe(0)
    expect(reactivate.stderr).toContain('revoked')
    const unknown = await cli(['keys', 'revoke', 'key_nope'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr.trim()).toMatch(/^lectern: API key 'key_nope' not found \(database \S+\)$/)
  })
})
