// Where a hot list's time goes: Lectern against the bare `node:http` server (the machine's floor)
// and against the framework's floor (`lib/framework-server.mjs`: Fastify answering the same bytes
// through the same shape of hooks, with none of Lectern's own work), in alternating runs on the
// same cores. Prints each server's req/s and CPU per request (from /proc), their medians, and what
// the framework and Lectern's own code each add to the bare server's CPU per request.
//
// On a copy of the 1k dataset's SQLite file (generated and imported on first use, as `npm run bench`
// does). Run `npm run build` first: this measures dist/.
//
// With `BENCH_BEFORE_DIR` (a built checkout), that build serves beside this one in the same
// rounds, and each round's ratio of the two is printed with their median.
//
//   node bench/framework-floor.mjs                 # the submissions hot list, 6 rounds of 4 s
//   BENCH_LIST=forms BENCH_ROUNDS=10 node bench/framework-floor.mjs
//   BENCH_BEFORE_DIR=../lectern-old BENCH_LIST=forms BENCH_ROUNDS=16 node bench/framework-floor.mjs
import { spawn } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readConfig } from './lib/config.mjs'
import { ensureDataset } from './lib/dataset.mjs'
import { ensureSqliteDatabase } from './lib/imports.mjs'
import { createApiKey, ROOT, snapshotBuild, startLectern } from './lib/lectern.mjs'
import { LOAD_CPU, onCpu, processCpuMs } from './lib/processes.mjs'
import { startReplay, writeFixture } from './lib/replay.mjs'
import { median } from './lib/stats.mjs'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const SECONDS = Number(process.env.BENCH_DURATION ?? 4)
const LIST = process.env.BENCH_LIST ?? 'submissions'

const config = readConfig()
const log = (message) => process.stderr.write(`[framework-floor] ${message}\n`)

/** One closed-loop run (10 connections) on the load generator's core: req/s and the server's CPU per request. */
function measure(server, path, key) {
  const options = {
    port: server.port,
    path,
    headers: { authorization: `Bearer ${key}` },
    connections: 10,
    duration: SECONDS,
    warmup: 1,
  }
  const [command, args] = onCpu(LOAD_CPU, process.execPath, [
    join(ROOT, 'bench', 'lib', 'load-worker.mjs'),
    JSON.stringify(options),
  ])
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  let cpuBefore = null
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
    if (cpuBefore === null && output.includes('MEASURING\n')) cpuBefore = processCpuMs(server.pid)
  })
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      const cpuAfter = processCpuMs(server.pid)
      const line = output.split('\n').find((l) => l.startsWith('RESULT '))
      if (code !== 0 || line === undefined || cpuBefore === null)
        return reject(new Error(`load generator failed (${code})`))
      const result = JSON.parse(line.slice('RESULT '.length))
      if (result.non2xx > 0 || result.errors > 0)
        return reject(new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`))
      resolve({
        reqPerSec: result.requests / SECONDS,
        cpuUsPerRequest: ((cpuAfter - cpuBefore) * 1000) / result.requests,
      })
    })
  })
}

const dataset = ensureDataset(config.dataDir, config.seed, 1000, log)
const source = await ensureSqliteDatabase(dataset, config, log)
const dir = mkdtempSync(join(tmpdir(), 'lectern-framework-floor-'))
const servers = []
try {
  copyFileSync(source.file, join(dir, 'lectern.db'))
  const url = `sqlite:${join(dir, 'lectern.db')}`
  const key = await createApiKey(url)
  const path =
    LIST === 'forms'
      ? '/api/v1/forms?page=1&pageSize=20'
      : `/api/v1/forms/${dataset.description.bigFormId}/submissions?page=1&pageSize=20`
  const lectern = await startLectern(url)
  servers.push({ name: 'Lectern', ...lectern })
  if (process.env.BENCH_BEFORE_DIR) {
    const before = snapshotBuild(process.env.BENCH_BEFORE_DIR, join(dir, 'build-before'))
    servers.push({ name: 'before', ...(await startLectern(url, { from: before })) })
  }
  const fixtureFile = join(dir, 'fixture.json')
  await writeFixture(lectern.port, path, key, fixtureFile)
  servers.push({ name: 'framework', ...(await startReplay('framework-server.mjs', fixtureFile)) })
  servers.push({ name: 'bare', ...(await startReplay('bare-server.mjs', fixtureFile)) })
  log(`${LIST} hot list, ${ROUNDS} rounds of ${SECONDS} s, the order reversed each round`)
  const results = new Map(servers.map((s) => [s.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
      const result = await measure(server, path, key)
      results.get(server.name).push(result)
      log(
        `${server.name.padEnd(9)} ${String(Math.round(result.reqPerSec)).padStart(6)} req/s ${result.cpuUsPerRequest.toFixed(1).padStart(6)} µs of CPU per request`,
      )
    }
  }
  const cpu = (name) => median(results.get(name).map((r) => r.cpuUsPerRequest))
  const rate = (name) => median(results.get(name).map((r) => r.reqPerSec))
  console.log(`${LIST} hot list, medians of ${ROUNDS} runs of ${SECONDS} s:`)
  for (const { name } of servers)
    console.log(
      `  ${name.padEnd(9)} ${String(Math.round(rate(name))).padStart(6)} req/s (${(rate(name) / rate('bare')).toFixed(2)}× bare), ${cpu(name).toFixed(1)} µs of CPU per request`,
    )
  console.log(
    `  the framework adds ${(cpu('framework') - cpu('bare')).toFixed(1)} µs to the bare server; Lectern's own work ${(cpu('Lectern') - cpu('framework')).toFixed(1)} µs more`,
  )
  if (results.has('before')) {
    // Each round's two runs are next to each other: their ratio shares that moment's machine.
    const ratios = results
      .get('Lectern')
      .map((after, round) => after.cpuUsPerRequest / results.get('before')[round].cpuUsPerRequest)
    console.log(
      `  this build's CPU per request against the earlier build's, by round: ${ratios.map((r) => r.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(3)}`,
    )
  }
} finally {
  for (const server of servers) await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
