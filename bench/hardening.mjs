#!/usr/bin/env node
// Measures what the hardening work changed, against a real `lectern serve` process:
//   slow   — 500 connections trickling a sign-in body one byte every 4 s: how many are still open
//            after 35 s (the request timeout is 30 s);
//   signin — 40 simultaneous dashboard sign-ins: the server's resident memory before and after, and
//            its peak (VmHWM), and the statuses they got.
// Usage: node bench/hardening.mjs [slow|signin|all] [lectern root, default: this checkout]
// The root may be an older build of Lectern (e.g. `git archive <commit>` built with `tsc`), to
// compare before and after.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const which = process.argv[2] ?? 'all'
const root = resolve(process.argv[3] ?? new URL('..', import.meta.url).pathname)
const bin = join(root, 'bin/lectern')
const dir = mkdtempSync(join(tmpdir(), 'lectern-hardening-bench-'))
const env = {
  ...process.env,
  DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
  LOG_LEVEL: 'info',
  TRUST_PROXY: 'true',
  RATE_LIMIT_PER_HOUR: '100000000',
  RATE_LIMIT_PER_SECOND: '100000',
}
const PASSWORD = 'a long bench passphrase'

const freePort = () =>
  new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => done(port))
    })
  })
const sleep = (ms) => new Promise((done) => setTimeout(done, ms))
const memory = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (name) => Math.round(Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)[1]) / 1024)
  return { rssMb: mb('VmRSS'), peakMb: mb('VmHWM') }
}

async function serve() {
  const created = spawnSync(
    process.execPath,
    [bin, 'users', 'create', '--email', 'bench@example.com', '--role', 'viewer'],
    {
      env,
      input: `${PASSWORD}\n`,
    },
  )
  if (created.status !== 0) throw new Error(`users create failed: ${created.stderr}`)
  const port = await freePort()
  const child = spawn(process.execPath, [bin, 'serve', '--port', String(port)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`did not start: ${output}`)), 30_000)
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('Server listening')) {
        clearTimeout(timer)
        done()
      }
    })
  })
  return { child, base: `http://127.0.0.1:${port}`, port }
}

async function slowClients() {
  const { child, port } = await serve()
  const body = 'email=bench%40example.com&password=' + 'x'.repeat(100)
  let open = 0
  let answered408 = 0
  const sockets = []
  for (let i = 0; i < 500; i++) {
    const socket = connect(port, '127.0.0.1')
    open += 1
    let data = ''
    socket.on('data', (chunk) => {
      data += chunk
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      open -= 1
      if (data.startsWith('HTTP/1.1 408')) answered408 += 1
    })
    socket.write(
      `POST /admin/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`,
    )
    let index = 0
    const timer = setInterval(() => {
      if (socket.destroyed || index >= body.length) return clearInterval(timer)
      socket.write(body[index++])
    }, 4_000)
    socket.on('close', () => clearInterval(timer))
    sockets.push(socket)
  }
  const samples = {}
  let elapsed = 0
  for (const at of [5, 20, 35, 60]) {
    await sleep((at - elapsed) * 1000)
    elapsed = at
    samples[`${at}s`] = open
  }
  for (const socket of sockets) socket.destroy()
  child.kill('SIGKILL')
  return { openAfter: samples, answered408 }
}

async function signIns() {
  const { child, base } = await serve()
  await sleep(1000)
  const before = memory(child.pid)
  const forms = await Promise.all(
    Array.from({ length: 40 }, async (_, i) => {
      const address = `10.9.0.${i + 1}`
      const page = await fetch(`${base}/admin/login`, { headers: { 'x-forwarded-for': address } })
      const cookie = page.headers
        .getSetCookie()
        .map((line) => line.split(';')[0])
        .join('; ')
      const csrf = /name="_csrf" value="([^"]*)"/.exec(await page.text())[1]
      return { address, cookie, csrf }
    }),
  )
  const started = performance.now()
  const statuses = await Promise.all(
    forms.map(async ({ address, cookie, csrf }, i) => {
      const res = await fetch(`${base}/admin/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, 'x-forwarded-for': address },
        body: new URLSearchParams({
          _csrf: csrf,
          email: 'bench@example.com',
          password: i % 2 ? PASSWORD : 'wrong',
        }),
      })
      await res.arrayBuffer()
      return res.status
    }),
  )
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  await sleep(1000)
  const after = memory(child.pid)
  child.kill('SIGKILL')
  const tally = {}
  for (const status of statuses) tally[status] = (tally[status] ?? 0) + 1
  return {
    rssBeforeMb: before.rssMb,
    rssAfterMb: after.rssMb,
    peakRssMb: after.peakMb,
    statuses: tally,
    seconds,
  }
}

try {
  const results = { root }
  if (which === 'slow' || which === 'all') results.slowClients = await slowClients()
  if (which === 'signin' || which === 'all') results.signIns = await signIns()
  console.log(JSON.stringify(results, null, 2))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
