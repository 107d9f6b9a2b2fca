import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it, type TestContext } from 'vitest'
import { freePort, type LongRunningCli, runCliProcess, startCli } from '../cli/run-cli.js'
import { TEST_DIALECT } from '../harness.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const READY = /Press Ctrl\+C to stop/
const PACKAGE: { version: string; scripts: Record<string, string> } = JSON.parse(
  readFileSync(join(ROOT, 'package.json'), 'utf8'),
)
const PACKAGE_VERSION = PACKAGE.version
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
/** The address every command in the README uses; tests put their own port in its place. */
const README_ORIGIN = 'http://127.0.0.1:3000'

/** The fenced blocks of one language under a `## heading` of the README, in order. */
function readmeBlocks(heading: string, language: string): string[] {
  const start = README.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`README.md has no section "${heading}"`)
  const end = README.indexOf('\n## ', start + 1)
  const section = README.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (match) => match[1] ?? '',
  )
}

/** A README shell block as commands, comments and blank lines left out. */
const commandsOf = (block: string) =>
  block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'))

/** The CLI arguments an npm script runs, for scripts that are `./bin/lectern <args>`. */
function lecternArgsOf(script: string): string[] {
  const command = PACKAGE.scripts[script]
  const args = command?.match(/^\.\/bin\/lectern((?: [\w-]+)+)$/)?.[1]
  if (!args) throw new Error(`npm run ${script} is "${command}", not a ./bin/lectern command`)
  return args.trim().split(' ')
}

/** The demo exactly as the README starts it (`npm run demo`), with `--port` as it says to add one. */
function readmeDemoArgs(port: number): string[] {
  const [twoCommands = ''] = readmeBlocks('Two commands', 'sh')
  if (!/\bnpm run demo\b/.test(twoCommands)) throw new Error('README.md no longer starts the demo')
  if (!README.includes('npm run demo -- --port'))
    throw new Error('README.md no longer says how to pick a port')
  return [...lecternArgsOf('demo'), '--port', String(port)]
}

const bash = promisify(execFile)
/** Runs README lines with bash, as a reader pasting them would, failing on the first that fails. */
const runReadme = (lines: string[], options: { cwd: string; env: Record<string, string> }) =>
  bash('bash', ['-euo', 'pipefail', '-c', lines.join('\n')], {
    cwd: options.cwd,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env },
  })

/** Resolves once `origin` answers /healthz, or rejects after a while. */
async function healthy(origin: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
    const ok = await fetch(`${origin}/healthz`).then(
      (res) => res.ok,
      () => false,
    )
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${origin} never answered /healthz`)
}

/** The demo's printed key, the CLI line it prints for its database, and the database's URL. */
function parseBanner(text: string) {
  const key = /API key:\s+(lk_live_[0-9A-Za-z]+)/.exec(text)?.[1]
  const cliLine = /^\s*(DATABASE_URL=(\S+) \.\/bin\/lectern keys list)$/m.exec(text)
  return { key, cliLine: cliLine?.[1], databaseUrl: cliLine?.[2] }
}

/** Runs at most `size` of the tasks given to it at once; the others wait their turn. */
function pool(size: number) {
  let free = size
  const waiting: (() => void)[] = []
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (free > 0) free--
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else free++
    }
  }
}

/**
 * What a new user does in their first hour, through the real CLI and real HTTP: run the demo (twice,
 * by mistake), point the CLI at it, mistype settings. The demo's default database is SQLite
 * whatever the test project, so this runs once, in the SQLite project.
 *
 * The tests run concurrently, each cleaning up what it started when it finishes, and the tests that
 * only look at a running demo share one. Starting Node keeps a core busy for a second or more, so no
 * more processes start at once than a small CI machine has cores.
 */
// Generous: a test's time includes its turn waiting for a core.
describe
  .runIf(TEST_DIALECT === 'sqlite')
  .concurrent('the first hour with the demo and the CLI', { timeout: 120_000 }, () => {
    const starting = pool(2)
    /** `runCliProcess`, when a core is free for it. */
    const cli = (...args: Parameters<typeof runCliProcess>) => starting(() => runCliProcess(...args))
    /** `runReadme`, when a core is free for it. */
    const readme = (...args: Parameters<typeof runReadme>) => starting(() => runReadme(...args))
    /** A new directory, removed when `test` finishes. */
    const tempDir = (test: TestContext) => {
      const dir = mkdtempSync(join(tmpdir(), 'lectern-first-hour-'))
      test.onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
      return dir
    }
    /** `lectern demo` in `dir` on `port`, quiet unless the test sets LOG_LEVEL. */
    const demo = (dir: string, port: number, env: Record<string, string> = {}) =>
      startCli(readmeDemoArgs(port), {
        cwd: dir,
        env: { DATABASE_URL: '', LOG_LEVEL: '', ...env },
        ready: READY,
      })
    /** A demo, started when a core is free and killed when `test` finishes; resolves once it is ready or failed. */
    const demoFor = (test: TestContext, dir: string, port: number) =>
      starting(async () => {
        const running = demo(dir, port)
        test.onTestFinished(() => {
          running.child.kill('SIGKILL')
        })
        // A demo that fails to start fails the test where it awaits `ready`.
        await running.ready.catch(() => {})
        return running
      })
    const formsWith = (port: number, key: string | undefined) =>
      fetch(`http://127.0.0.1:${port}/api/v1/forms`, { headers: { authorization: `Bearer ${key}` } })

    // One demo, looked at in turn by the tests below that neither write to it nor kill it; the last
    // stops it and checks everything it printed meanwhile. They run one after another, beside the others.
    describe('with one demo running', () => {
      let shared: { dir: string; port: number; demo: LongRunningCli; banner: string }
      beforeAll(async () => {
        const dir = mkdtempSync(join(tmpdir(), 'lectern-first-hour-'))
        const port = await freePort()
        let running: LongRunningCli | undefined
        const banner = starting(() => {
          running = demo(dir, port)
          return running.ready
        })
        const stop = () => {
          running?.child.kill('SIGKILL')
          rmSync(dir, { recursive: true, force: true })
        }
        try {
          shared = { dir, port, banner: await banner, demo: running as LongRunningCli }
        } catch (error) {
          stop()
          throw error
        }
        return stop
      }, 60_000)

      it.sequential("prints the exact CLI line that opens the demo's database, and that line finds the demo's key", async (test) => {
        const { cliLine, databaseUrl } = parseBanner(shared.banner)
        expect(cliLine).toBe(
          `DATABASE_URL=sqlite:${join(shared.dir, 'data', 'demo.db')} ./bin/lectern keys list`,
        )

        // Without it, the CLI says which database it looked for instead of printing an empty table.
        const elsewhere = tempDir(test)
        const [keys, missing] = await Promise.all([
          cli(['keys', 'list'], { databaseUrl, cwd: tempDir(test) }),
          cli(['keys', 'list'], { cwd: elsewhere, env: { DATABASE_URL: '' } }),
        ])
        expect(keys.code).toBe(0)
        expect(keys.stdout).toMatch(/Demo key .*active .*admin@example\.com/)
        expect(missing.code).toBe(1)
        expect(missing.stderr.trim()).toBe(
          `lectern: The database file ${join(elsewhere, 'data', 'lectern.db')} does not exist: check DATABASE_URL (sqlite:./data/lectern.db), or create it with \`lectern migrate\``,
        )
        expect(existsSync(join(elsewhere, 'data'))).toBe(false)
        expect((await cli(['migrate'], { cwd: elsewhere, env: { DATABASE_URL: '' } })).code).toBe(0)
        const empty = await cli(['keys', 'list'], { cwd: elsewhere, env: { DATABASE_URL: '' } })
        expect(empty.code).toBe(0)
        expect(empty.stdout.trim()).toBe(`No API keys in sqlite:${join(elsewhere, 'data', 'lectern.db')}`)
      })

      it.sequential('refuses a second demo on a busy port in one line, and the running demo keeps its data', async () => {
        const { dir, port } = shared
        const { key, databaseUrl } = parseBanner(shared.banner)
        const file = join(dir, 'data', 'demo.db')
        const inode = statSync(file).ino

        const second = await cli(['demo', '--port', String(port)], {
          cwd: dir,
          env: { DATABASE_URL: '' },
        })
        expect(second.code).not.toBe(0)
        expect(second.stderr.trim().split('\n')).toHaveLength(1)
        expect(second.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is already in use`)
        expect(second.stderr).not.toContain('unexpected error')

        // The first server would keep reading a deleted file through its open handle: what matters
        // is that the file on disk is still the one holding its key.
        expect(statSync(file).ino).toBe(inode)
        const keys = JSON.parse((await cli(['keys', 'list', '--json'], { databaseUrl })).stdout) as {
          prefix: string
        }[]
        expect(keys).toHaveLength(1)
        expect(key?.startsWith(keys[0]?.prefix ?? '?')).toBe(true)
        expect((await formsWith(port, key)).status).toBe(200)
      })

      it.sequential("answers the README's first API call with the forms the README shows", async () => {
        const { key } = parseBanner(shared.banner)
        const [call = ''] = readmeBlocks('A first API call', 'sh')
        const [shown = '{}'] = readmeBlocks('A first API call', 'json')
        expect(call).toContain(README_ORIGIN)

        const { stdout } = await readme(
          commandsOf(call.replaceAll(README_ORIGIN, `http://127.0.0.1:${shared.port}`)),
          {
            cwd: shared.dir,
            env: { KEY: key ?? '' },
          },
        )
        const answer = JSON.parse(stdout) as { data: unknown[]; meta: unknown }
        const example = JSON.parse(shown) as { data: unknown[]; meta: unknown }
        expect(answer.meta).toEqual(example.meta)
        // The README shows some of the demo's forms, exactly as the API writes them.
        for (const form of example.data) expect(answer.data).toContainEqual(form)
      })

      it.sequential('keeps the demo quiet so that the admin password and the key end its start-up and stay on screen', async () => {
        const { banner, port } = shared
        const { key } = parseBanner(banner)
        const password = /Password:\s+(\S+)/.exec(banner)?.[1]
        const lines = banner.trimEnd().split('\n')
        expect(lines.at(-1)).toBe('Press Ctrl+C to stop.')
        expect(lines.at(-2)).toBe(`Sign in as admin@example.com with password ${password}; API key ${key}`)

        for (let i = 0; i < 3; i++) expect((await formsWith(port, key)).status).toBe(200)
        expect(await shared.demo.stop()).toBe(0)
        // Nothing after the banner: not for these requests, the other tests' or the shutdown.
        const { stdout, stderr } = shared.demo.output()
        expect(stdout).toBe(banner)
        expect(stderr).toBe('')
      })
    })

    it('refuses a second demo on another port while the first holds the database, and takes over the lock of a killed one', async (test) => {
      const dir = tempDir(test)
      const port = await freePort()
      const first = await demoFor(test, dir, port)
      const { key } = parseBanner(await first.ready)
      const pid = readFileSync(join(dir, 'data', 'demo.db.lock'), 'utf8').trim()
      expect(pid).toBe(String(first.child.pid))

      const second = await cli(['demo', '--port', String(await freePort())], {
        cwd: dir,
        env: { DATABASE_URL: '' },
      })
      expect(second.code).not.toBe(0)
      expect(second.stderr.trim().split('\n')).toHaveLength(1)
      expect(second.stderr).toContain(`demo.db is in use by process ${pid}`)
      expect((await formsWith(port, key)).status).toBe(200)

      // A demo killed outright leaves its lock behind; the next run sees its process is gone.
      first.child.kill('SIGKILL')
      await first.stop()
      const third = await demoFor(test, dir, await freePort())
      expect(parseBanner(await third.ready).key).toMatch(/^lk_live_/)
      expect(await third.stop()).toBe(0)
      expect(existsSync(join(dir, 'data', 'demo.db.lock'))).toBe(false)
    })

    it('reports a busy port from serve in one line', async (test) => {
      const dir = tempDir(test)
      const port = await freePort()
      const blocker = createServer()
      test.onTestFinished(() => {
        blocker.close()
      })
      await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve))
      const result = await cli(['serve', '--port', String(port)], {
        databaseUrl: `sqlite:${join(dir, 'lectern.db')}`,
      })
      expect(result.code).not.toBe(0)
      expect(result.stderr.trim()).toBe(
        `lectern: cannot listen on 127.0.0.1:${port}: the port is already in use (is Lectern already running there?); choose another with --port N or PORT`,
      )
    })

    it("runs the README's CLI example against the demo once the demo's export line is pasted, and says where each write went", async (test) => {
      const dir = tempDir(test)
      const port = await freePort()
      const running = await demoFor(test, dir, port)
      const banner = await running.ready
      const demoFile = join(dir, 'data', 'demo.db')
      const exported = /^\s*export (DATABASE_URL=\S+)$/m.exec(banner)?.[1]
      expect(exported).toBe(`DATABASE_URL=sqlite:${demoFile}`)
      const env = { DATABASE_URL: exported?.slice('DATABASE_URL='.length) ?? '' }
      const lecternFile = join(dir, 'data', 'lectern.db')
      const note = `Note: the demo running here (process ${running.child.pid}) serves another database; to work on its data: export DATABASE_URL=sqlite:${demoFile}`

      // The shell where the line was pasted and one where it was not work on different databases,
      // so the two run side by side.
      const pasted = async () => {
        // The example, as the README gives it.
        const user = await cli(['users', 'create', '--email', 'ada@example.com', '--role', 'global_admin'], {
          cwd: dir,
          env,
          input: 'a long passphrase here\n',
        })
        expect(user.code, user.stderr).toBe(0)
        expect(user.stderr).toBe(`Wrote to sqlite:${demoFile}\n`)
        const created = await cli(['keys', 'create', '--name', 'Website', '--user', 'ada@example.com'], {
          cwd: dir,
          env,
        })
        expect(created.code, created.stderr).toBe(0)
        expect(created.stderr).toBe(`Wrote to sqlite:${demoFile}\n`)
        expect((await formsWith(port, created.lines.at(-1))).status).toBe(200)
      }
      // Without it, the writes go to the CLI's own database, and each says so and points at the demo.
      const notPasted = async () => {
        const plain = { cwd: dir, env: { DATABASE_URL: '' } }
        const missing = await cli(['keys', 'create', '--name', 'Website'], plain)
        expect(missing.code).toBe(1)
        expect(missing.stderr.split('\n')).toEqual([
          `lectern: The database file ${lecternFile} does not exist: check DATABASE_URL (sqlite:./data/lectern.db), or create it with \`lectern migrate\``,
          note,
          '',
        ])
        expect((await cli(['migrate'], plain)).code).toBe(0)
        await cli(['users', 'create', '--email', 'ada@example.com', '--role', 'global_admin'], plain)
        const elsewhere = await cli(['keys', 'create', '--name', 'Website'], plain)
        expect(elsewhere.code, elsewhere.stderr).toBe(0)
        expect(elsewhere.lines.at(-1)).toMatch(/^lk_live_\w+$/)
        expect(elsewhere.stderr.split('\n')).toEqual([`Wrote to sqlite:${lecternFile}`, note, ''])
        expect((await formsWith(port, elsewhere.lines.at(-1))).status).toBe(401)
      }
      await Promise.all([pasted(), notPasted()])
      expect(await running.stop()).toBe(0)
    })

    it('names the database it opened whenever a command finds nothing', async (test) => {
      const dir = tempDir(test)
      const databaseUrl = `sqlite:${join(dir, 'lectern.db')}`
      const inDatabase = (args: string[]) => cli(args, { databaseUrl })
      // The demo's submissions, imported into the wrong database, name a form that is not there.
      const file = join(dir, 'submissions.json')
      writeFileSync(file, JSON.stringify({ submissions: [{ formId: 'form_contact', data: { a: 1 } }] }))

      expect((await inDatabase(['migrate'])).code).toBe(0)
      // Each of these reads the empty database and writes nothing, so they run side by side.
      const [users, noAdmin, unknownKey, imported] = await Promise.all([
        inDatabase(['users', 'list']),
        inDatabase(['keys', 'create', '--name', 'Website']),
        inDatabase(['keys', 'revoke', 'key_missing']),
        inDatabase(['import', file]),
      ])
      expect(users.stdout.trim()).toBe(`No users in ${databaseUrl}`)
      expect(noAdmin.code).not.toBe(0)
      expect(noAdmin.stderr).toContain(`No global admin exists`)
      expect(noAdmin.stderr).toContain(`(database ${databaseUrl})`)
      expect(unknownKey.stderr.trim()).toBe(
        `lectern: API key 'key_missing' not found (database ${databaseUrl})`,
      )
      expect(imported.code).not.toBe(0)
      expect(imported.stderr.split('\n')[0]).toContain(`(database ${databaseUrl})`)
    })

    it('counts in words: one form, one page, two redirects', async (test) => {
      const dir = tempDir(test)
      const file = join(dir, 'content.json')
      writeFileSync(
        file,
        JSON.stringify({
          forms: [{ title: 'Contact' }],
          pages: [{ title: 'Home', slug: 'home', path: '/' }],
          redirects: [
            { fromPath: '/a', toPath: '/x' },
            { fromPath: '/b', toPath: '/x' },
          ],
        }),
      )
      const databaseUrl = `sqlite:${join(dir, 'lectern.db')}`
      const result = await cli(['import', file], { databaseUrl })
      expect(result.code).toBe(0)
      expect(result.stdout.trim()).toBe(
        `Imported 1 form, 0 submissions, 1 page and 2 redirects from ${file} into ${databaseUrl}`,
      )
    })

    it('prints its version from package.json', async () => {
      const results = await Promise.all(['--version', '-V'].map((flag) => cli([flag])))
      for (const result of results) {
        expect(result.code).toBe(0)
        expect(result.stdout.trim()).toBe(PACKAGE_VERSION)
      }
    })

    it('names the flag, the setting and what it accepts when a setting is wrong', async (test) => {
      const cwd = tempDir(test)
      // Every one is refused before it opens a database, so they run side by side.
      const [port, demoPort, logLevel, both] = await Promise.all([
        cli(['serve', '--port', 'abc'], { cwd }),
        cli(['demo', '--port', '99999'], { cwd }),
        cli(['serve'], { cwd, env: { LOG_LEVEL: 'loud' } }),
        cli(['serve'], { cwd, env: { RATE_LIMIT_PER_HOUR: '-5', PORT: '70000' } }),
      ])
      expect(port.code).not.toBe(0)
      expect(port.stderr).toBe(
        "error: option '--port <port>' argument 'abc' is invalid. Port must be an integer from 1 to 65535. (run with --help for usage)\n",
      )
      expect(demoPort.stderr).toContain("option '--port <port>' argument '99999' is invalid")
      expect(existsSync(join(cwd, 'data'))).toBe(false)

      expect(logLevel.stderr.trim()).toBe(
        'lectern: Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      )
      expect(both.stderr.trim().split('\n')).toHaveLength(1)
      expect(both.stderr).toContain('RATE_LIMIT_PER_HOUR must be a positive integer (got "-5")')
      expect(both.stderr).toContain('PORT must be an integer from 1 to 65535 (got 70000)')
    })

    it("runs the README's two commands as package.json and CI define them", () => {
      const [block = ''] = readmeBlocks('Two commands', 'sh')
      const commands = commandsOf(block).flatMap((line) => line.split('&&').map((part) => part.trim()))
      expect(commands).toEqual(['npm install', 'npm run demo', 'npm test'])
      expect(PACKAGE.scripts.test).toBeDefined()
      expect(lecternArgsOf('demo')).toEqual(['demo'])
      // The README says CI installs a clean machine, then runs npm ci and npm test (and then checks
      // the other Node.js lines).
      const ci = commandsOf(readFileSync(join(ROOT, '.ci', 'run'), 'utf8'))
      const install = ci.indexOf('npm ci --no-audit --no-fund')
      expect(install).toBeGreaterThan(-1)
      expect(ci[install + 1]).toBe('npm test')
    })

    it("sets up an installation with the README's commands, and its key answers the first API call", async (test) => {
      const dir = tempDir(test)
      const port = await freePort()
      const env = { DATABASE_URL: `sqlite:${join(dir, 'lectern.db')}`, PORT: String(port) }
      const commands = commandsOf(readmeBlocks('Your own installation', 'sh')[0] ?? '')
      const serve = commands.at(-1) ?? ''
      expect(serve).toBe('./bin/lectern serve')

      // Everything before `serve`, run from the repository as the README's ./bin/lectern assumes.
      const setup = await readme([...commands.slice(0, -1), 'printf %s "$KEY"'], { cwd: ROOT, env })
      const key = setup.stdout.trim().split('\n').at(-1) ?? ''
      expect(key).toMatch(/^lk_live_/)

      await starting(() => {
        const server = spawn('bash', ['-c', `exec ${serve}`], {
          cwd: ROOT,
          env: { ...process.env, LOG_LEVEL: 'warn', ...env },
          stdio: 'ignore',
        })
        test.onTestFinished(() => {
          server.kill('SIGKILL')
        })
        return healthy(`http://127.0.0.1:${port}`, server)
      })
      const [call = ''] = readmeBlocks('A first API call', 'sh')
      const { stdout } = await readme(
        commandsOf(call.replaceAll(README_ORIGIN, `http://127.0.0.1:${port}`)),
        {
          cwd: dir,
          env: { KEY: key },
        },
      )
      expect(JSON.parse(stdout)).toEqual({
        data: [],
        meta: { total: 0, page: 1, pageSize: 20, totalPages: 0 },
      })
    })
  })
