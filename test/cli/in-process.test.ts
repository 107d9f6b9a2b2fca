import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMigratedTestDatabase, type TestDatabase } from '../harness.js'
import { runCli } from './run-cli.js'

/**
 * This process's open handles and requests (sockets, timers, child processes), and one entry per
 * open file descriptor where Linux shows them: a SQLite file open in a driver is no handle of Node's.
 */
function openResources(): string[] {
  const descriptors = existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0
  return [...process.getActiveResourcesInfo(), ...Array.from({ length: descriptors }, () => 'descriptor')]
}

/**
 * What is open now and was not in `before` (each entry counted), once closing has settled: a closed
 * socket leaves the list on a later turn.
 */
async function openedSince(before: string[]): Promise<string[]> {
  const extra = () => {
    const now = openResources()
    for (const resource of before) {
      const at = now.indexOf(resource)
      if (at !== -1) now.splice(at, 1)
    }
    return now.sort()
  }
  for (let i = 0; i < 20 && extra().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  return extra()
}

/** The tests run the CLI's `main` in their own process: it must leave that process as it found it. */
describe('the CLI run inside another program', () => {
  // A database this process does not hold open: SQLite keeps the descriptors of a file closed by
  // one connection while another in the process still locks it.
  let dir: string
  let database: TestDatabase
  const cli = (args: string[], input?: string) => runCli(args, { databaseUrl: database.url, input })

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-in-process-'))
    database = await createMigratedTestDatabase(dir)
  })
  afterEach(async () => {
    await database.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('leaves no connection, timer or other handle open once a command has returned', async () => {
    const content = join(dir, 'content.json')
    writeFileSync(content, JSON.stringify({ redirects: [{ fromPath: '/old', toPath: '/new' }] }))
    const before = openResources()
    const runs = [
      await cli(
        ['users', 'create', '--email', 'admin@example.com', '--role', 'global_admin'],
        'a long passphrase\n',
      ),
      await cli(['keys', 'create', '--name', 'Website']),
      await cli(['keys', 'list']),
      await cli(['import', content]),
      await cli(['redirects', 'match', '/old']),
      await cli(['redirects', 'export', '--format', 'nginx']),
      await cli(['audit', 'list', '--json']),
      await cli(['webhooks', 'list']),
      await cli(['migrate']),
    ]
    expect(runs.map((run) => run.code)).toEqual(runs.map(() => 0))
    const failures = [
      await cli(['users', 'disable', 'nobody@example.com']),
      await cli(['redirects', 'match', '/nowhere']),
      await cli(['keys', 'create', '--nme', 'typo']),
    ]
    expect(failures.map((run) => run.code)).toEqual([1, 1, 1])
    expect(await openedSince(before)).toEqual([])
  })

  it('changes neither the environment nor the exit status of the process it runs in', async () => {
    const environment = { ...process.env }
    const exitCode = process.exitCode
    const listed = await runCli(['keys', 'list'], {
      databaseUrl: database.url,
      env: { SECRET_KEY: 'a secret only this run has, long enough' },
    })
    expect(listed.code).toBe(0)
    const unmatched = await cli(['redirects', 'match', '/nowhere'])
    expect(unmatched.code).toBe(1)
    expect(unmatched.stdout).toBe('no redirect\n')
    expect(process.env).toEqual(environment)
    expect(process.exitCode).toBe(exitCode)
  })

  it("writes commander's own answers (version, help, mistakes) to the run's streams", async () => {
    const version = await runCli(['--version'])
    expect(version).toMatchObject({ code: 0, stderr: '' })
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/)
    const help = await runCli(['users', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: lectern users')
    const mistake = await runCli(['users', 'nonsense'])
    expect(mistake.code).toBe(1)
    expect(mistake.stdout).toBe('')
    expect(mistake.stderr).toContain("unknown command 'nonsense'")
  })

  it.each([
    ['a required option left out', ['keys', 'create']],
    ['an option value refused', ['webhooks', 'deliveries', '--limit', '0']],
    ['a near miss of a command', ['users', 'lsit']],
    ['an unknown option', ['keys', 'list', '--jsno']],
  ])('tells %s in one line on stderr, with the pointer to --help', async (_, args) => {
    const mistake = await runCli(args)
    expect(mistake.code).toBe(1)
    expect(mistake.stdout).toBe('')
    expect(mistake.stderr).toMatch(/^error: [^\n]+ \(run with --help for usage\)\n$/)
  })
})
