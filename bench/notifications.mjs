// What webhooks cost the server. A real `lectern serve` (its delivery worker included) on a
// temporary SQLite file, or with BENCH_POSTGRES=1 on PostgreSQL in a schema of its own; a receiver
// in this process that answers 204 at once. Measures: the hot list's latency idle, then a burst of
// BENCH_BURST public form posts (default 1,000), the rate at which their webhooks are delivered, and
// the hot list's latency while a backlog of BENCH_BACKLOG (default 10,000) drains; then `lectern import` of BENCH_IMPORT submissions
// (default 100,000) with no endpoint and with one, to see what writing their events costs.
// Run `npm run build` first: this measures dist/.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { postgresExec, withSchema } from './lib/postgres.mjs'

const BURST = Number(process.env.BENCH_BURST ?? 1000)
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 10_000)
const IMPORT_ROWS = Number(process.env.BENCH_IMPORT ?? 100_000)
const postgres = process.env.BENCH_POSTGRES === '1'
const BIN = fileURLToPath(new URL('../bin/lectern', import.meta.url))
const baseUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `bench_notify_${process.pid}`
const dir = mkdtempSync(join(tmpdir(), 'lectern-notify-'))
if (postgres) await postgresExec(baseUrl, `create schema "${schema}"`)
const databaseUrl = postgres ? withSchema(baseUrl, schema) : `sqlite:${join(dir, 'notify.db')}`
const env = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  SECRET_KEY: 'a benchmark secret key of at least 32 characters',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  INTAKE_RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_PER_HOUR: '100000000',
  RATE_LIMIT_PER_SECOND: '1000000',
  LOG_LEVEL: 'warn',
}

function cli(args, input = '') {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c) => (out += c))
    child.stderr.on('data', (c) => (err += c))
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')}: ${err}`))))
    child.stdin.end(input)
  })
}

function call(port, method, path, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}
const round = (n) => Math.round(n * 100) / 100

/** Lists the hot page with 4 clients until `stop()` says; returns the latencies. */
function listLoad(port, key, path) {
  const latencies = []
  let running = true
  const client = async () => {
    while (running) {
      const { status, ms } = await call(port, 'GET', path, { authorization: `Bearer ${key}` })
      if (status !== 200) throw new Error(`list answered ${status}`)
      latencies.push(ms)
    }
  }
  const clients = Array.from({ length: 4 }, client)
  return {
    async stop() {
      running = false
      await Promise.all(clients)
      return latencies
    },
  }
}

let server
const received = []
const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    received.push({ at: performance.now(), id: req.headers['webhook-id'] })
    res.writeHead(204).end()
  })
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = `http://127.0.0.1:${receiver.address().port}/hook`
try {
  await cli(['migrate'])
  await cli(
    ['users', 'create', '--email', 'bench@example.com', '--role', 'global_admin'],
    'a benchmark passphrase\n',
  )
  const key = (await cli(['keys', 'create', '--name', 'bench'])).trim().split('\n').pop()
  const formFile = join(dir, 'form.json')
  writeFileSync(
    formFile,
    JSON.stringify({
      forms: [{ id: 'form_bench_notify', title: 'Bench', intake: { enabled: true } }],
      submissions: Array.from({ length: 1000 }, (_, i) => ({ formId: 'form_bench_notify', data: { i } })),
    }),
  )
  await cli(['import', formFile, '--quiet'])
  const port = 40000 + (process.pid % 20000)
  server = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  for (let i = 0; ; i++) {
    try {
      if ((await call(port, 'GET', '/readyz')).status === 200) break
    } catch {}
    if (i > 600) throw new Error('server not ready')
    await new Promise((r) => setTimeout(r, 100))
  }
  const hot = '/api/v1/forms/form_bench_notify/submissions?pageSize=20'
  const idleLoad = listLoad(port, key, hot)
  await new Promise((r) => setTimeout(r, 5000))
  const idle = await idleLoad.stop()
  await cli(['webhooks', 'add', '--url', hook, '--events', 'submission.created'])

  // A burst of public posts, each notified: how fast intake takes them, and whether delivery keeps up.
  const burstStart = performance.now()
  let next = 0
  const poster = async () => {
    while (next < BURST) {
      next += 1
      const { status } = await call(
        port,
        'POST',
        '/f/form_bench_notify',
        { 'content-type': 'application/json', accept: 'application/json' },
        JSON.stringify({ name: 'Ada', n: next }),
      )
      if (status !== 201) throw new Error(`post answered ${status}`)
    }
  }
  await Promise.all(Array.from({ length: 8 }, poster))
  const burstEnd = performance.now()
  const waitFor = async (count) => {
    const since = performance.now()
    while (received.length < count) {
      if (performance.now() - since > 300_000) throw new Error(`only ${received.length} delivered`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }
  await waitFor(BURST)
  const postsDrainedAt = received[BURST - 1].at
  // A backlog all at once (an import of BACKLOG submissions commits their deliveries together): the
  // drain rate, and the hot list's latency while it drains.
  const backlogFile = join(dir, 'backlog.json')
  writeFileSync(
    backlogFile,
    JSON.stringify({
      submissions: Array.from({ length: BACKLOG }, (_, i) => ({
        formId: 'form_bench_notify',
        data: { backlog: i },
      })),
    }),
  )
  await cli(['import', backlogFile, '--quiet'])
  const backlogStart = performance.now()
  const busyLoad = listLoad(port, key, hot)
  await waitFor(BURST + BACKLOG)
  const busy = await busyLoad.stop()
  const backlogDrainedAt = received[BURST + BACKLOG - 1].at
  const firstOfBacklog = received[BURST].at
  const unique = new Set(received.map((r) => r.id)).size
  server.kill('SIGTERM')
  await new Promise((r) => server.once('exit', r))
  server = undefined

  // Imports: with the endpoint above (every new submission notified), then with none.
  const importFile = join(dir, 'import.ndjson')
  const lines = []
  for (let i = 0; i < IMPORT_ROWS; i++)
    lines.push(
      JSON.stringify({ kind: 'submission', formId: 'form_bench_notify', data: { i, text: 'x'.repeat(40) } }),
    )
  writeFileSync(importFile, `${lines.join('\n')}\n`)
  let t = performance.now()
  await cli(['import', importFile, '--quiet'])
  const importWith = (performance.now() - t) / 1000
  const endpoints = JSON.parse(await cli(['webhooks', 'list', '--json']))
  for (const endpoint of endpoints) await cli(['webhooks', 'remove', endpoint.id])
  t = performance.now()
  await cli(['import', importFile, '--quiet'])
  const importWithout = (performance.now() - t) / 1000

  const result = {
    database: postgres ? 'postgres' : 'sqlite',
    burst: BURST,
    intakePostsPerSecond: round(BURST / ((burstEnd - burstStart) / 1000)),
    postsDeliveredSecondsAfterLastPost: round(Math.max(0, postsDrainedAt - burstEnd) / 1000),
    backlog: BACKLOG,
    backlogDeliveredPerSecond: round(BACKLOG / ((backlogDrainedAt - backlogStart) / 1000)),
    backlogFirstDeliverySeconds: round(Math.max(0, firstOfBacklog - backlogStart) / 1000),
    duplicates: received.length - unique,
    hotListIdle: {
      requests: idle.length,
      p50: round(percentile(idle, 50)),
      p99: round(percentile(idle, 99)),
    },
    hotListDraining: {
      requests: busy.length,
      p50: round(percentile(busy, 50)),
      p99: round(percentile(busy, 99)),
    },
    importRows: IMPORT_ROWS,
    importSecondsWithEndpoint: round(importWith),
    importSecondsWithout: round(importWithout),
  }
  console.log(JSON.stringify(result, null, 2))
} finally {
  if (server) server.kill('SIGKILL')
  receiver.close()
  if (postgres) await postgresExec(baseUrl, `drop schema if exists "${schema}" cascade`)
  rmSync(dir, { recursive: true, force: true })
}
