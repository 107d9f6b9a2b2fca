import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, TEST_DIALECT } from '../harness.js'
import { BIN, runCliProcess } from './run-cli.js'

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Starts a long-running CLI command and resolves once `ready` matches its stdout. */
function startCli(args: string[], env: Record<string, string>, cwd: string, ready: RegExp) {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, cwd })
  let stdout = ''
  let stderr = ''
  const output = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${stdout}${stderr}`)), 20_000)
    child.stdout?.on('data', (chunk) => {
      stdout += chunk
      if (ready.test(stdout)) {
        clearTimeout(timer)
        resolve(stdout)
      }
    })
    child.stderr?.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)))
  })
  return { child, output }
}

function exitCode(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}

/**
 * Process tests, all of them: serve and demo live until a signal ends the process (and the demo
 * locks its database to the process), and migrate here is the proof that the built binary migrates.
 */
describe('lectern serve, migrate and demo', () => {
  const dirs: string[] = []
  const children: ChildProcess[] = []
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
    for (const child of children.splice(0)) child.kill('SIGKILL')
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
    const { child, output } = startCli(
      ['serve', '--port', String(port)],
      { DATABASE_URL: (await databaseIn(dir)).url, LOG_LEVEL: 'info' },
      dir,
      /Server listening/,
    )
    children.push(child)
    await output
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/forms`)
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ error: 'missing_authorization_header', message: expect.any(String) })
    const exited = exitCode(child)
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
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
      const { child, output } = startCli(['demo'], env, dir, /Press Ctrl\+C/)
      children.push(child)
      const text = await output
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

      const exited = exitCode(child)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)

      // A second run starts from a fresh database rather than failing on the first run's admin.
      const again = startCli(['demo'], env, dir, /Press Ctrl\+C/)
      children.push(again.child)
      const secondKey = /API key:\s+(lk_live_[0-9A-Za-z]+)/.exec(await again.output)?.[1]
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
    const { child, output } = startCli(['demo'], env, dir, /Press Ctrl\+C/)
    children.push(child)
    const key = /API key:\s+(lk_live_[0-9A-Za-z]+)/.exec(await output)?.[1]
    const forms = await fetch(`http://127.0.0.1:${port}/api/v1/forms`, {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(forms.status).toBe(200)
    const exited = exitCode(child)
    child.kill('SIGTERM')
    expect(await exited).toBe(0)

    const again = await runCliProcess(['demo'], { databaseUrl, cwd: dir })
    expect(again.code).not.toBe(0)
    expect(again.stderr).toContain('needs an empty database')
  })
})
