// Starts `lectern demo` with the Node.js running this script and uses it as a visitor and a program
// would for a while (DEMO_CHECK_SECONDS, default 20): the API with the printed key, an unknown key,
// the dashboard's sign-in page and the API reference. Fails if the demo does not start, answers
// anything unexpected, or exits before it is stopped; then stops it and expects a clean exit.
// Usage: node scripts/check-demo.mjs
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

const seconds = Number(process.env.DEMO_CHECK_SECONDS ?? 20)
const lectern = join(import.meta.dirname, '..', 'bin', 'lectern')
const dir = mkdtempSync(join(tmpdir(), 'lectern-demo-check-'))

const port = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address()
    server.close(() => resolve(port))
  })
})

const demo = spawn(process.execPath, [lectern, 'demo', '--port', String(port)], {
  cwd: dir,
  // A long check makes more requests than the key's default hourly limit allows.
  env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'warn', RATE_LIMIT_PER_HOUR: '1000000' },
  stdio: ['ignore', 'pipe', 'pipe'],
})
let output = ''
demo.stdout.on('data', (chunk) => {
  output += chunk
})
demo.stderr.on('data', (chunk) => {
  output += chunk
})
let exited = null
const exit = new Promise((resolve) => {
  demo.on('exit', (code, signal) => {
    exited = { code, signal }
    resolve(exited)
  })
})

function fail(message) {
  console.error(`demo check on Node ${process.version}: ${message}\n--- demo output ---\n${output}`)
  if (exited === null) demo.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
  process.exit(1)
}

const startedAt = Date.now()
let key
while (key === undefined) {
  if (exited !== null) fail(`the demo exited before it served (${JSON.stringify(exited)})`)
  if (Date.now() - startedAt > 60_000) fail('the demo printed no API key within 60 s')
  key = /API key:\s+(lk_live_\w+)/.exec(output)?.[1]
  await sleep(100)
}
console.log(`demo on Node ${process.version} started in ${Date.now() - startedAt} ms`)

const base = `http://127.0.0.1:${port}`
async function expectStatus(path, status, headers = {}) {
  const response = await fetch(base + path, { headers })
  await response.arrayBuffer()
  if (response.status !== status) fail(`GET ${path} answered ${response.status}, expected ${status}`)
}

const auth = { authorization: `Bearer ${key}` }
let requests = 0
const until = Date.now() + seconds * 1000
while (Date.now() < until) {
  if (exited !== null) fail(`the demo exited while serving (${JSON.stringify(exited)})`)
  // Under the demo key's limit of 10 a second: each round is 6 requests, 4 of them with the key.
  await expectStatus('/api/v1/forms', 200, auth)
  await expectStatus('/api/v1/forms/form_contact/submissions?pageSize=5', 200, auth)
  await expectStatus(`/api/v1/page-builder?page=${1 + (requests % 3)}`, 200, auth)
  await expectStatus('/api/v1/page-builder/redirects?active=true', 200, auth)
  await expectStatus('/api/v1/forms', 401, { authorization: 'Bearer lk_live_unknownunknownunknownunknown00' })
  await expectStatus('/admin/login', 200)
  requests += 6
  await sleep(500)
}
await expectStatus('/docs', 200)

demo.kill('SIGTERM')
const { code, signal } = await exit
rmSync(dir, { recursive: true, force: true })
if (code !== 0) fail(`the demo exited with ${code ?? signal} when stopped`)
console.log(
  `demo on Node ${process.version} served ${requests + 1} requests in ${seconds} s and stopped cleanly`,
)
