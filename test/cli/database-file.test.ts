import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TEST_DIALECT } from '../harness.js'
import { runCli } from './run-cli.js'

/** Only SQLite makes a database by opening it: this runs once, in the SQLite project. */
describe.runIf(TEST_DIALECT === 'sqlite')('a SQLite DATABASE_URL naming a file that does not exist', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-database-file-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('is refused in one line by every command that does not make a database, creating nothing', async () => {
    const file = join(dir, 'no', 'such', 'dir', 'x.db')
    const databaseUrl = `sqlite:${file}`
    for (const args of [
      ['keys', 'list'],
      ['keys', 'list', '--json'],
      ['users', 'list'],
      ['audit', 'list'],
      ['redirects', 'match', '/old'],
      ['keys', 'create', '--name', 'Website'],
      ['users', 'create', '--email', 'ada@example.com', '--role', 'viewer'],
    ]) {
      const result = await runCli(args, { databaseUrl })
      expect(result.code, args.join(' ')).toBe(1)
      expect(result.stdout).toBe('')
      expect(result.stderr).toBe(
        `lectern: The database file ${file} does not exist: check DATABASE_URL (${databaseUrl}), or create it with \`lectern migrate\`\n`,
      )
    }
    expect(existsSync(join(dir, 'no'))).toBe(false)
  })

  it('is created, with its directory, by migrate and by import', async () => {
    const migrated = join(dir, 'a', 'lectern.db')
    const migrate = await runCli(['migrate'], { databaseUrl: `sqlite:${migrated}` })
    expect(migrate.code, migrate.stderr).toBe(0)
    expect(existsSync(migrated)).toBe(true)
    const listed = await runCli(['keys', 'list'], { databaseUrl: `sqlite:${migrated}` })
    expect(listed.stdout.trim()).toBe(`No API keys in sqlite:${migrated}`)

    const imported = join(dir, 'b', 'lectern.db')
    const content = join(dir, 'content.json')
    writeFileSync(content, JSON.stringify({ forms: [{ title: 'Contact' }] }))
    const load = await runCli(['import', content], { databaseUrl: `sqlite:${imported}` })
    expect(load.code, load.stderr).toBe(0)
    expect(existsSync(imported)).toBe(true)
  })
})
