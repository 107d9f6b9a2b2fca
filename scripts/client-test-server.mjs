#!/usr/bin/env node
/**
 * The test server every official client's test suite runs against (the shared client contract).
 *
 *   npm run build && node scripts/client-test-server.mjs
 *
 * Starts a real Lectern server (the built `dist/`) on 127.0.0.1 on a free port, with a fresh
 * SQLite database in a temporary directory, imports `spec/client-fixture.json`, creates one user per
 * role and the API keys below, then prints exactly ONE line of JSON on stdout:
 *
 *   {"baseUrl":"http://127.0.0.1:41234","keys":{"admin":"lk_live_…", …}}
 *
 * keys: `admin`, `editor`, `viewer` (active keys of users with that role), `inactive` (deactivated),
 * `revoked`, `unknown` (well-formed, never created), `burst` and `burst2` (fresh admin keys kept for
 * the rate-limit scenarios), and two scoped keys of the admin: `pagesOnly` (scope `pages:read`) and
 * `contactSubmissions` (scope `submissions:read`, narrowed to `form_contact`). Default rate limits
 * apply (10 per second, 1000 per hour).
 *
 * It serves until its stdin closes (so spawn it with stdin as a pipe, and it stops when its parent
 * dies) or it receives SIGTERM/SIGINT; then it stops and deletes its temporary directory. Nothing
 * but that one line is written to stdout: server logs are off, and problems go to stderr.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const fixture = join(root, 'spec', 'client-fixture.json')

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** A key in the API's format that was never created: 8-bit bytes folded to base62 is fine here. */
function unknownKey() {
  return `lk_live_${[...randomBytes(40)].map((byte) => BASE62[byte % 62]).join('')}`
}

async function loadBuilt() {
  try {
    const [{ startServer }, { loadConfig }, { createServices }] = await Promise.all([
      import('../dist/server.js'),
      import('../dist/config.js'),
      import('../dist/services/index.js'),
    ])
    return { startServer, loadConfig, createServices }
  } catch (error) {
    throw new Error(`Cannot load the built server (run \`npm run build\` first): ${error.message}`)
  }
}

const directory = mkdtempSync(join(tmpdir(), 'lectern-client-test-'))
const removeDirectory = () => rmSync(directory, { recursive: true, force: true })
// Whatever ends the process, its temporary database does not outlive it.
process.once('exit', removeDirectory)

let server
let stopping

function stop(exitCode = 0) {
  stopping ??= (async () => {
    try {
      await server?.close()
    } catch (error) {
      process.stderr.write(`client-test-server: error while stopping: ${error?.stack ?? error}\n`)
      exitCode = 1
    }
    removeDirectory()
    process.exit(exitCode)
  })()
  return stopping
}

process.once('SIGTERM', () => stop())
process.once('SIGINT', () => stop())

async function main() {
  const { startServer, loadConfig, createServices } = await loadBuilt()
  // A clean environment: a REDIS_URL or LOG_LEVEL of the caller's shell must not leak in.
  const config = {
    ...loadConfig(
      {},
      {
        DATABASE_URL: `sqlite:${join(directory, 'lectern.db')}`,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        ADMIN_DASHBOARD: 'off',
        API_REFERENCE: 'off',
      },
    ),
    // Port 0 (a free port the system picks) is below the configuration's minimum on purpose:
    // only this launcher and tests may ask for it.
    PORT: 0,
  }
  server = await startServer(config)
  const services = createServices(server.database)
  await services.importer.importFile(fixture)

  const adminEmail = 'admin@example.com'
  await services.users.createUser({ email: adminEmail, role: 'global_admin' })
  const createKey = async (name, userEmail = adminEmail, narrowing = {}) =>
    (await services.keys.createApiKey({ name, userEmail, ...narrowing })).plainKey

  // Only a global admin may create keys, so the editor and viewer get theirs before their demotion.
  const roleKey = async (role) => {
    const email = `${role}@example.com`
    await services.users.createUser({ email, role: 'global_admin' })
    const key = await createKey(`${role} key`, email)
    await services.users.setRole(email, role)
    return key
  }

  const keys = {
    admin: await createKey('admin key'),
    editor: await roleKey('editor'),
    viewer: await roleKey('viewer'),
    inactive: undefined,
    revoked: undefined,
    unknown: unknownKey(),
    burst: await createKey('burst key'),
    burst2: await createKey('second burst key'),
    pagesOnly: await createKey('sitemap key', adminEmail, { scopes: ['pages:read'] }),
    contactSubmissions: await createKey('CRM sync key', adminEmail, {
      scopes: ['submissions:read'],
      forms: ['form_contact'],
    }),
  }
  const inactive = await services.keys.createApiKey({ name: 'inactive key', userEmail: adminEmail })
  await services.keys.deactivateApiKey(inactive.key.id)
  keys.inactive = inactive.plainKey
  const revoked = await services.keys.createApiKey({ name: 'revoked key', userEmail: adminEmail })
  await services.keys.revokeApiKey(revoked.key.id)
  keys.revoked = revoked.plainKey

  const baseUrl = server.url.replace('0.0.0.0', '127.0.0.1')
  process.stdout.write(`${JSON.stringify({ baseUrl, keys })}\n`)

  process.stdin.on('end', () => stop())
  process.stdin.on('error', () => stop())
  process.stdin.resume()
}

main().catch((error) => {
  process.stderr.write(`client-test-server: ${error?.stack ?? error}\n`)
  stop(1)
})
