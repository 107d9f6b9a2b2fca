import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import semver from 'semver'
import { afterAll, describe, expect, it } from 'vitest'
import { TEST_DIALECT } from '../harness.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const readJson = (file: string) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'))

/** The Node.js version the README promises ("Node.js 20.19 or later"). */
function promisedNodeVersion(readme: string): string {
  const match = /Requirements: Node\.js (\d+(?:\.\d+){0,2}) or later/.exec(readme)
  if (!match?.[1]) throw new Error('README.md no longer says which Node.js version it needs')
  const version = semver.coerce(match[1])
  if (!version) throw new Error(`README.md names an unreadable Node.js version: ${match[1]}`)
  return version.version
}

interface LockEntry {
  version?: string
  engines?: { node?: string } | string[]
  optional?: boolean
  os?: string[]
  cpu?: string[]
}

/**
 * A new user's first commands (clone, install) must work on the Node.js version the README names.
 * None of this depends on the database, so it runs once, in the SQLite project. Each test waits on
 * its own npm process, so they run side by side.
 */
describe.runIf(TEST_DIALECT === 'sqlite').concurrent('installing Lectern from a fresh clone', () => {
  const scratch: string[] = []
  afterAll(() => {
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true })
  })

  it('finds that npm ci can install a clone of the committed tree: its lock file satisfies package.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lectern-clone-'))
    scratch.push(dir)
    await run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, dir])
    // What breaks `npm ci` on a fresh clone is a lock file that no longer satisfies package.json,
    // which a dry run finds without unpacking anything. The real install of a clean clone is CI's
    // own first step (.ci/run), and again on each other Node.js line (scripts/test-runtime.sh).
    const { stderr } = await run('npm', ['ci', '--ignore-scripts', '--dry-run', '--no-audit', '--no-fund'], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    })
    expect(stderr).not.toMatch(/EUSAGE|Missing:|EBADENGINE/)
  }, 240_000)

  it('names in package.json the same minimum Node.js version as the README', () => {
    const readmeVersion = promisedNodeVersion(readFileSync(join(ROOT, 'README.md'), 'utf8'))
    const engines: string = readJson('package.json').engines.node
    expect(semver.minVersion(engines)?.version).toBe(readmeVersion)
  })

  it('installs on each supported Node.js line no package whose engines exclude it', () => {
    const engines: string = readJson('package.json').engines.node
    // The lowest version of each line the range admits: 20.19.0, 22.0.0, 24.0.0.
    const lines = engines.split('||').map((range) => semver.minVersion(range.trim())?.version ?? '')
    expect(lines.length).toBeGreaterThanOrEqual(3)
    const lock: { packages: Record<string, LockEntry> } = readJson('package-lock.json')
    const refused: string[] = []
    for (const version of lines)
      for (const [path, entry] of Object.entries(lock.packages)) {
        // The root, and the per-platform binaries npm skips on every other platform.
        if (path === '' || (entry.optional && (entry.os || entry.cpu))) continue
        const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node
        if (range === undefined || semver.satisfies(version, range)) continue
        // npm skips an optional package whose engines exclude the running Node.js, silently.
        if (entry.optional) continue
        refused.push(
          `on ${version}: ${path.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${range}`,
        )
      }
    expect(refused).toEqual([])
  })
  it.each([
    ['the server', '.'],
    ['the JavaScript client', 'clients/js'],
  ])('packs %s with its licence and readme, and no source map naming files it lacks', async (_name, dir) => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: join(ROOT, dir),
      maxBuffer: 16 * 1024 * 1024,
    })
    const files = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? []
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']))
    expect(files.some((file) => file.endsWith('.js'))).toBe(true)
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([])
  })
})
