import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_DIALECT } from '../harness.js'
import { freePort, runCliProcess, startCli } from './run-cli.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const RECORDER = fileURLToPath(new URL('./load-record.mjs', import.meta.url))
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }

/** Runs `bin/lectern args` and returns the file URLs of the modules the process loaded, in order. */
async function modulesLoadedBy(args: string[], databaseUrl: string, record: string): Promise<string[]> {
  const result = await runCliProcess(args, {
    databaseUrl,
    env: { LECTERN_LOAD_RECORD: record },
    nodeOptions: ['--import', RECORDER],
  })
  expect(result.code, result.stderr).toBe(0)
  return readFileSync(record, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith('file:'))
}

// The bundle is the same for every database; the PostgreSQL project runs `bin/lectern` elsewhere.
describe.runIf(TEST_DIALECT === 'sqlite')('the command line as built (dist/bundle/)', () => {
  let dir: string
  let databaseUrl: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-bundle-'))
    databaseUrl = `sqlite:${join(dir, 'lectern.db')}`
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("runs a command from a few bundled files, loading none of Kysely's or TypeBox's modules nor the ones tsc writes", async () => {
    expect((await runCliProcess(['migrate'], { databaseUrl })).code).toBe(0)
    const loaded = await modulesLoadedBy(['users', 'list'], databaseUrl, join(dir, 'loaded'))
    const own = (url: string) => url.slice(pathToFileURL(ROOT).href.length)
    expect(loaded.map(own)).toContain('dist/bundle/lectern.js')
    expect(loaded.filter((url) => /\/node_modules\/(kysely|@sinclair\/typebox)\//.test(url))).toEqual([])
    expect(
      loaded.map(own).filter((path) => path.startsWith('dist/') && !path.startsWith('dist/bundle/')),
    ).toEqual([])
    // With the modules tsc writes and the packages' own files, 721.
    expect(loaded.length).toBeLessThan(20)
  })

  it("serves the dashboard's files, the API reference's script and the package's version, found beside the modules it was built from", async () => {
    const port = await freePort()
    const server = startCli(['serve', '--port', String(port)], {
      env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' },
      cwd: dir,
      ready: /Server listening/,
    })
    try {
      await server.ready
      const base = `http://127.0.0.1:${port}`
      const stylesheet = await fetch(`${base}/admin/static/admin.css`)
      expect(stylesheet.status).toBe(200)
      expect(await stylesheet.text()).toBe(readFileSync(join(ROOT, 'src/admin/static/admin.css'), 'utf8'))
      const script = await fetch(`${base}/docs/js/scalar.js`)
      expect(script.status).toBe(200)
      expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000)
      const document = (await (await fetch(`${base}/openapi.json`)).json()) as { info: { version: string } }
      expect(document.info.version).toBe(PACKAGE.version)
    } finally {
      await server.stop()
    }
  })
})
