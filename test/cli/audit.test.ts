import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { runCli, runCliProcess } from './run-cli.js'

describe('lectern audit list', () => {
  let ctx: TestContext
  const cli = (args: string[], input?: string) => runCli(args, { databaseUrl: ctx.databaseUrl, input })

  beforeEach(async () => {
    ctx = await createTestContext()
  })
  afterEach(() => ctx.close())

  it('lists what the command line did, newest first, as JSON with at, actor, action and target', async () => {
    expect(
      (await cli(['users', 'create', '--email', 'admin@example.com', '--role', 'global_admin'])).code,
    ).toBe(0)
    const created = await cli(['keys', 'create', '--name', 'Website'])
    expect(created.code).toBe(0)
    const keyId = /Created API key (\S+)/.exec(created.stdout)?.[1]
    expect((await cli(['keys', 'revoke', keyId ?? ''])).code).toBe(0)

    const listed = await cli(['audit', 'list', '--json'])
    expect(listed.code).toBe(0)
    const entries = JSON.parse(listed.stdout) as {
      at: string
      actor: string
      action: string
      target: string
    }[]
    expect(entries.map((entry) => [entry.action, entry.target])).toEqual([
      ['key.revoked', keyId],
      ['key.created', keyId],
      ['user.created', 'admin@example.com'],
    ])
    for (const entry of entries) {
      expect(entry.actor).toBe('cli')
      expect(entry.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
    }
    // The plain key printed at creation is nowhere in the log.
    expect(listed.stdout).not.toContain(created.lines.at(-1))

    const limited = JSON.parse((await cli(['audit', 'list', '--json', '--limit', '1'])).stdout) as unknown[]
    expect(limited).toEqual([expect.objectContaining({ action: 'key.revoked' })])

    const table = await cli(['audit', 'list'])
    expect(table.code).toBe(0)
    expect(table.lines[0]).toMatch(/^at\s+actor\s+action\s+target/)
    expect(table.lines[1]).toContain('key.revoked')
  })

  it('refuses a limit that is not a positive integer, with one clear line', async () => {
    for (const limit of ['0', 'ten', '-1', '100001']) {
      const res = await cli(['audit', 'list', '--limit', limit])
      expect(res.code, limit).not.toBe(0)
      expect(res.stderr, limit).toContain('The limit must be an integer from 1 to 10000')
    }
  })

  // A process test: the built binary's `audit list`, its exit status and its stdout.
  it('says so when the log is empty', async () => {
    const res = await runCliProcess(['audit', 'list'], { databaseUrl: ctx.databaseUrl })
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/^No audit entries in /)
  })
})
