import { execFile } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_DIALECT } from '../../../test/harness.js'

const run = promisify(execFile)
const CLIENT_DIR = fileURLToPath(new URL('../', import.meta.url))

// What a program using the package does, in each module system: list forms through a canned fetch.
const USAGE = (load: string) => `${load}
const fetch = async (url) => new Response(JSON.stringify({ data: [{ id: 'form_1', title: 'T', description: null }], meta: { total: 1, page: 1, pageSize: 20, totalPages: 1 } }), { headers: { 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '999', 'x-ratelimit-reset': '1' } })
const lectern = new Lectern({ baseUrl: 'http://lectern.test', apiKey: 'lk_live_x', fetch })
lectern.forms.list({ active: true }).then(({ data }) => {
  const redirect = createRedirectMatcher([{ fromPath: '/über', toPath: '/neu-ü', type: 'permanent' }]).match('/%C3%BCber?x=1')
  console.log(JSON.stringify({ id: data[0].id, rateLimit: lectern.rateLimit, errorClass: typeof RateLimitError, redirect }))
})
`

// Building writes clients/js/dist: once, in one of the two projects.
describe.runIf(TEST_DIALECT === 'sqlite')('the @lectern/client package', () => {
  let consumer: string

  beforeAll(async () => {
    await run('npm', ['run', 'build', '--silent'], { cwd: CLIENT_DIR })
    consumer = mkdtempSync(join(tmpdir(), 'lectern-client-consumer-'))
    mkdirSync(join(consumer, 'node_modules', '@lectern'), { recursive: true })
    symlinkSync(CLIENT_DIR, join(consumer, 'node_modules', '@lectern', 'client'), 'dir')
  }, 120_000)
  afterAll(() => rmSync(consumer, { recursive: true, force: true }))

  it.each([
    [
      'an ES module',
      'esm.mjs',
      "import { createRedirectMatcher, Lectern, RateLimitError } from '@lectern/client'",
    ],
    [
      'a CommonJS module',
      'cjs.cjs',
      "const { createRedirectMatcher, Lectern, RateLimitError } = require('@lectern/client')",
    ],
  ])('loads and works from %s', async (_, file, load) => {
    writeFileSync(join(consumer, file), USAGE(load))
    const { stdout } = await run(process.execPath, [join(consumer, file)], { cwd: consumer })
    expect(JSON.parse(stdout)).toEqual({
      id: 'form_1',
      rateLimit: { limit: 1000, remaining: 999, reset: 1 },
      errorClass: 'function',
      redirect: { status: 301, location: '/neu-%C3%BC?x=1' },
    })
  })

  it('ships type declarations for both builds', () => {
    for (const build of ['esm', 'cjs']) {
      expect(existsSync(join(CLIENT_DIR, 'dist', build, 'index.d.ts'))).toBe(true)
      expect(existsSync(join(CLIENT_DIR, 'dist', build, 'schema.d.ts'))).toBe(true)
    }
  })

  it('depends on nothing at run time and uses no Node built-in, so it runs in browsers and edge runtimes', () => {
    const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8'))
    expect(manifest.dependencies ?? {}).toEqual({})
    for (const build of ['esm', 'cjs']) {
      const dir = join(CLIENT_DIR, 'dist', build)
      for (const file of readdirSync(dir).filter((name) => name.endsWith('.js'))) {
        // Comments may mention `process.env` in examples; the code must not.
        const code = readFileSync(join(dir, file), 'utf8')
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/^\s*\/\/.*$/gm, '')
        expect(code, file).not.toMatch(
          /\bfrom ['"]node:|require\(['"](node:|fs|path|http|https|crypto|buffer)['"]\)/,
        )
        expect(code, file).not.toMatch(/\b(process|Buffer|__dirname)\b/)
      }
    }
  })
})
