import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, TEST_DIALECT } from '../harness.js'
import { freePort, type LongRunningCli, runCliProcess, startCli } from './run-cli.js'

/**
 * Process tests, all of them: serve and demo live until a signal ends the process (and the demo
 * locks its database to the process), and migrate here is the proof that the built binary migrates.
 */
describe('lectern serve, migrate and demo', () => {
  const dirs: string[] = []
  const processes: LongRunningCli[] = []
  /** `startCli`, with the process killed after the test whatever happens. */
  const started = (...args: Parameters<typeof startCli>) => {
    const cli = startCli(...args)
    processes.push(cli)
    return cli
  }
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'lectern-cli-'))
    dirs.push(dir)
    return dir
  }
  const drops: (() => Promise<void>)[] = []
  /** An empty database of the run's dialect (a file in `dir`, or a fresh PostgreSQL schema). */
  const databaseIn = async (dir: string) => {
    const testDatabase = await createTestDatabase(dir)
    drops.push(testDatabase.drop)
    return testDatabase
  }
  afterEach(async () => {
    for (const { child } of processes.splice(0)) child.kill('SIGKILL')
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
    for (const drop of drops.splice(0)) await drop()
  })

  it('migrates a new database and then reports it up to date', async () => {
    const databaseUrl = (await databaseIn(tempDir())).url
    const first = await runCliProcess(['migrate'], { databaseUrl })
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('001-initial')
    const second = await runCliProcess(['migrate'], { databaseUrl })
    expect(second.stdout.trim()).toBe('Schema is up to date')
  })

  it('serves on the requested port and exits 0 on SIGTERM', async () => {
    const dir = tempDir()
    const port = await freePort()
    const server = started(['serve', '--port', String(port)], {
      env: { DATABASE_URL: (await databaseIn(dir)).url, LOG_LEVEL: 'info' },
      cwd: dir,
      ready: /Server listening/,
    })
    await server.ready
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/forms`)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'missing_authorization_header', message: expect.any(String) })
    expect(await server.stop()).toBe(0)
  })

  it('refuses a bad configuration with one clear line', async () => {
    const result = await runCliProcess(['serve'], {
      env: { PORT: 'eighty', RATE_LIMIT_PER_HOUR: '0' },
      cwd: tempDir(),
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('PORT')
    expect(result.stderr).toContain('RATE_LIMIT_PER_HOUR')
  })

  // The embedded default: no DATABASE_URL, so whichever database the run tests, this is SQLite.
  it.runIf(TEST_DIALECT === 'sqlite')(
    'runs a demo with sample content, prints an admin, a key and curl commands that work',
    async () => {
      const dir = tempDir()
      const port = await freePort()
      const env = { PORT: String(port), LOG_LEVEL: 'warn', DATABASE_URL: '' }
      const demo = started(['demo'], { env, cwd: dir, ready: /Press Ctrl\+C/ })
      const text = await demo.ready
      const key = /API key:\s+(lk_live_[0-9A-Za-z]+)/.exec(text)?.[1]
      expect(key).toBeDefined()
      expect(text).toMatch(/Password:\s+\S{12,}/)
      const curls = text.split('\n').filter((line) => line.trim().startsWith('curl '))
      expect(curls).toHaveLength(3)

      const headers = { authorization: `Bearer ${key}` }
      const forms = (await (await fetch(`http://127.0.0.1:${port}/api/v1/forms`, { headers })).json()) as {
        data: { id: string }[]
      }
      expect(forms.data.length).toBeGreaterThanOrEqual(3)
      const submissions = (await (
        await fetch(`http://127.0.0.1:${port}/api/v1/forms/form_contact/submissions`, { headers })
      ).json()) as { meta: { total: number } }
      expect(submissions.meta.total).toBeGreaterThanOrEqual(24)
      const inactive = (await (
        await fetch(`http://127.0.0.1:${port}/api/v1/page-builder/redirects?active=false`, { headers })
      ).json()) as { meta: { total: number } }
      expect(inactive.meta.total).toBeGreaterThanOrEqual(1)

      expect(await demo.stop()).toBe(0)

      // A second run starts from a fresh database rather than failing on the first run's admin.
      const again = started(['demo'], { env, cwd: dir, ready: /Press Ctrl\+C/ })
      const secondKey = /API key:\s+(lk_live_[0-9A-Za-z]+)/.exec(await again.ready)?.[1]
      const old = await fetch(`http://127.0.0.1:${port}/api/v1/forms`, { headers })
      expect(old.status).toBe(401)
      const fresh = await fetch(`http://127.0.0.1:${port}/api/v1/forms`, {
        headers: { authorization: `Bearer ${secondKey}` },
      })
      expect(fresh.status).toBe(200)
    },
  )

  it('runs the demo on an empty database named by DATABASE_URL, and refuses one that holds users', async () => {
    const dir = tempDir()
    const databaseUrl = (await databaseIn(dir)).url
    const port = await freePort()
    const env = { PORT: String(port), LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl }
    const demo = started(['demo'], { env, cwd: dir, ready: /Press Ctrl\+C/ })
    const key = /API key:\s+(lk_live_[0-9A-Za-z]+)/.exec(await demo.ready)?.[1]
    const forms = await fetch(`http://127.0.0.1:${port}/api/v1/forms`, {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(forms.status).toBe(200)
    expect(await demo.stop()).toBe(0)

    const again = await runCliProcess(['demo'], { databaseUrl, cwd: dir })
    expect(again.code).not.toBe(0)
    expect(again.stderr).toContain('needs an empty database')
  })
})
