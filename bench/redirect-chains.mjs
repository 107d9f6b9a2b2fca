#!/usr/bin/env node
// Redirect chains under load: a long chain among many redirects, imported by `lectern import` and by
// the dashboard's CSV import, then the dashboard pages that analyse chains, served by a real
// `lectern serve` process. Prints how long each step took and the server's event-loop delay
// (p99 and max, measured inside the server by a preloaded monitor) while it ran.
//
//   node bench/redirect-chains.mjs [--chain 100000] [--total 1000000] [--database sqlite|postgres]
//                                  [--lectern <checkout with dist/>]
//
// Runs the built server (`npm run build` first), of this checkout or the one `--lectern` names (to
// compare two builds). Numbers are printed, never asserted. To see what holds the event loop, the
// server can be run with BENCH_CPU_PROF=<dir> (a CPU profile), BENCH_TRACE_GC=1 (the collector's
// pauses in its log) or BENCH_PRELOAD=<module> (a module of your own, e.g. one timing statements).
import { spawn } from 'node:child_process'
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT } from './lib/lectern.mjs'
import { freePort, sleep, stopProcess } from './lib/processes.mjs'

const { values: options } = parseArgs({
  options: {
    chain: { type: 'string', default: '100000' },
    total: { type: 'string', default: '1000000' },
    database: { type: 'string', default: 'sqlite' },
    'postgres-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    lectern: { type: 'string', default: ROOT },
  },
})
const CHAIN = Number(options.chain)
const TOTAL = Math.max(Number(options.total), CHAIN)
const BIN = join(resolve(options.lectern), 'bin', 'lectern')
const PASSWORD = 'bench password 1234'
const EMAIL = 'chains@example.com'

const dir = mkdtempSync(join(tmpdir(), 'lectern-chains-'))
const loopFile = join(dir, 'loop.json')
// The server's log, kept when the run fails: it says why.
const serverLog = join(tmpdir(), `lectern-chains-server-${process.pid}.log`)
const monitor = join(dir, 'loop-monitor.mjs')
// Preloaded into the server: answers SIGUSR2 with the event-loop delay since the last signal.
writeFileSync(
  monitor,
  `import { monitorEventLoopDelay } from 'node:perf_hooks'
import { writeFileSync } from 'node:fs'
const histogram = monitorEventLoopDelay({ resolution: 5 })
histogram.enable()
process.on('SIGUSR2', () => {
  const ms = (n) => Math.round(n / 1e4) / 100
  writeFileSync(${JSON.stringify(loopFile)}, JSON.stringify({ p99: ms(histogram.percentile(99)), max: ms(histogram.max) }))
  histogram.reset()
})
`,
)

let schema
let databaseUrl = `sqlite:${join(dir, 'chains.db')}`
if (options.database === 'postgres') {
  schema = `bench_chains_${process.pid}`
  await psql(`create schema ${schema}`)
  databaseUrl = `${options['postgres-url']}?options=${encodeURIComponent(`-c search_path=${schema}`)}`
}

const env = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }
delete env.REDIS_URL

/** Runs the CLI and resolves with its output and how long it took. */
function lectern(args, input) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    child.stderr.on('data', (chunk) => {
      out += chunk
    })
    child.on('close', (code) =>
      code === 0
        ? resolve({ out, ms: performance.now() - started })
        : reject(new Error(`lectern ${args[0]} failed: ${out}`)),
    )
    child.stdin.end(input ?? '')
  })
}

async function psql(statement) {
  const pg = (await import('pg')).default
  const client = new pg.Client({ connectionString: options['postgres-url'] })
  await client.connect()
  await client.query(statement)
  await client.end()
}

function writeNdjson(file, count, line) {
  const chunks = []
  for (let i = 0; i < count; i++) chunks.push(line(i))
  writeFileSync(file, `${chunks.join('\n')}\n`)
}

const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`
const rows = []
const record = (step, ms, loop) => {
  console.log(`${step}: ${fmt(ms)}${loop ? `, event loop p99 ${loop.p99} ms, max ${loop.max} ms` : ''}`)
  rows.push({
    step,
    time: fmt(ms),
    'loop p99': loop ? `${loop.p99} ms` : '',
    'loop max': loop ? `${loop.max} ms` : '',
  })
}

let server
try {
  await lectern(['migrate'])
  const filler = TOTAL - CHAIN
  if (filler > 0) {
    const file = join(dir, 'filler.ndjson')
    writeNdjson(file, filler, (i) =>
      JSON.stringify({ kind: 'redirect', fromPath: `/old-${i}`, toPath: `/new-${i}` }),
    )
    record(
      `lectern import: ${filler.toLocaleString('en-US')} unchained redirects`,
      (await lectern(['import', file])).ms,
    )
  }
  const chainFile = join(dir, 'chain.ndjson')
  writeNdjson(chainFile, CHAIN, (i) =>
    JSON.stringify({ kind: 'redirect', fromPath: `/m${i}`, toPath: `/m${i + 1}` }),
  )
  record(
    `lectern import: a ${CHAIN.toLocaleString('en-US')}-link chain`,
    (await lectern(['import', chainFile])).ms,
  )
  await lectern(['users', 'create', '--email', EMAIL, '--role', 'global_admin'], PASSWORD)

  const port = await freePort()
  const profile = [
    ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    // The collector's pauses, in the server's log, to tell them from the server's own work.
    ...(process.env.BENCH_TRACE_GC ? ['--trace-gc'] : []),
    ...(process.env.BENCH_PRELOAD ? ['--import', process.env.BENCH_PRELOAD] : []),
  ]
  server = spawn(process.execPath, [...profile, '--import', monitor, BIN, 'serve', '--port', String(port)], {
    env,
    stdio: ['ignore', openSync(serverLog, 'w'), 'inherit'],
  })
  server.on('exit', (code, signal) => {
    if (code !== 0) console.error(`the server exited (${signal ?? code}); its log: ${serverLog}`)
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (
      await fetch(`${base}/healthz`).then(
        (res) => res.ok,
        () => false,
      )
    )
      break
    if (i > 200) throw new Error('the server did not start')
    await sleep(100)
  }

  const cookies = new Map()
  const remember = (res) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const at = pair.indexOf('=')
      cookies.set(pair.slice(0, at), pair.slice(at + 1))
    }
  }
  const cookie = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  const csrfOf = (body) => /name="_csrf" value="([^"]*)"/.exec(body)?.[1] ?? ''
  const get = async (path) => {
    const started = performance.now()
    const res = await fetch(`${base}${path}`, { headers: { cookie: cookie() }, redirect: 'manual' })
    remember(res)
    const body = await res.text()
    return { status: res.status, body, ms: performance.now() - started }
  }
  const login = await get('/admin/login')
  const signIn = await fetch(`${base}/admin/login`, {
    method: 'POST',
    headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: EMAIL, password: PASSWORD, _csrf: csrfOf(login.body) }),
    redirect: 'manual',
  })
  remember(signIn)
  if (signIn.status !== 303) throw new Error(`sign-in failed: ${signIn.status}`)

  /** The server's event-loop delay since the last call. */
  const loop = async () => {
    rmSync(loopFile, { force: true })
    server.kill('SIGUSR2')
    for (let i = 0; i < 100; i++) {
      try {
        return JSON.parse(readFileSync(loopFile, 'utf8'))
      } catch {
        await sleep(20)
      }
    }
    throw new Error('the loop monitor did not answer')
  }
  const measured = async (step, work) => {
    await loop()
    // Health probes alongside, as a load balancer sends them: each waits for the loop to turn.
    let probing = true
    let worstProbe = 0
    const probes = (async () => {
      while (probing) {
        const started = performance.now()
        await fetch(`${base}/healthz`).then((res) => res.arrayBuffer())
        worstProbe = Math.max(worstProbe, performance.now() - started)
        await sleep(20)
      }
    })()
    const started = performance.now()
    const result = await work()
    const ms = performance.now() - started
    probing = false
    await probes
    record(`${step} (worst /healthz ${Math.round(worstProbe)} ms)`, ms, await loop())
    return result
  }

  for (const round of ['first', 'second']) {
    await measured(`GET /admin/redirects, ${round} time`, () => get('/admin/redirects'))
    await measured(`GET /admin, ${round} time`, () => get('/admin'))
  }
  // The first answers may come before the analysis is done ("checking…"); wait until it is.
  let analysed
  await measured('chain analysis complete (pages polled until reported)', async () => {
    for (;;) {
      analysed = await get('/admin/redirects')
      if (
        !analysed.body.includes('Checking the redirects for chains') &&
        !analysed.body.includes('still being checked')
      )
        return
      await sleep(100)
    }
  })
  console.log(
    `dashboard reports: ${/(\d+) redirects? forms? chains?/.exec(analysed.body)?.[0] ?? 'no chains'}`,
  )
  await measured('GET /admin/redirects, analysed', () => get('/admin/redirects'))
  await measured('GET /admin, analysed', () => get('/admin'))
  const lastPage = Math.ceil(TOTAL / 20)
  await measured(`GET /admin/redirects?page=${lastPage} (last page)`, () =>
    get(`/admin/redirects?page=${lastPage}`),
  )

  // A second chain through the dashboard's CSV import, as an editor uploads one.
  const importForm = await get('/admin/redirects/import')
  const csv = `fromPath,toPath\n${Array.from({ length: CHAIN }, (_, i) => `/c${i},/c${i + 1}`).join('\n')}\n`
  const form = new FormData()
  form.set('_csrf', csrfOf(importForm.body))
  form.set('file', new Blob([csv], { type: 'text/csv' }), 'chain.csv')
  const uploaded = await measured(`dashboard CSV import: a ${CHAIN.toLocaleString('en-US')}-link chain`, () =>
    fetch(`${base}/admin/redirects/import`, {
      method: 'POST',
      headers: { cookie: cookie() },
      body: form,
      redirect: 'manual',
    }),
  )
  if (uploaded.status !== 303)
    throw new Error(`the CSV import answered ${uploaded.status}: ${await uploaded.text()}`)
  await measured('GET /admin/redirects after the CSV import', () => get('/admin/redirects'))
  await measured('one more redirect, checked for loops along the chain', async () => {
    const form = await get('/admin/redirects/new')
    return fetch(`${base}/admin/redirects`, {
      method: 'POST',
      headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        _csrf: csrfOf(form.body),
        fromPath: `/m${CHAIN}`,
        toPath: '/m0',
        type: 'permanent',
        isActive: 'true',
      }),
      redirect: 'manual',
    }).then((res) => res.text())
  })
  await measured('flatten every chain', async () => {
    const page = await get('/admin/redirects')
    return fetch(`${base}/admin/redirects/flatten`, {
      method: 'POST',
      headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrfOf(page.body) }),
      redirect: 'manual',
    }).then((res) => res.text())
  })

  console.log(
    `\nRedirect chains: ${CHAIN.toLocaleString('en-US')}-link chain among ${TOTAL.toLocaleString('en-US')} redirects, ${options.database}`,
  )
  console.table(rows)
} finally {
  if (server) await stopProcess(server)
  if (schema) await psql(`drop schema if exists ${schema} cascade`)
  rmSync(dir, { recursive: true, force: true })
}
