// Instructions a request costs the server's main thread, counted by valgrind's callgrind: the same
// for the same work whatever else the machine runs, where time on these shared machines moves by a
// fifth between runs. For changes too small for `framework-floor.mjs` to tell from noise.
//
// The server runs under valgrind on a copy of the 1k dataset's SQLite file (generated and imported
// on first use, as `npm run bench` does) and is read by a few keep-alive connections: a warm-up,
// then phases of a fixed number of requests, the counters zeroed before each phase and dumped after
// it. Each phase gives the main thread's instructions per request and those of every other thread
// (V8's compilers and collector helpers). Until V8 has settled (for the forms hot list, 20,000 to
// 30,000 requests in) phases differ by up to a tenth; once its other threads run under 2% of the
// main thread's count, phases of one build agree within about 1%. The result is the median of the
// settled phases. Needs `valgrind` (Debian's package); a build takes six to eight minutes.
//
//   node bench/instructions.mjs                                  # the forms hot list, this build
//   BENCH_BEFORE_DIR=../lectern-old node bench/instructions.mjs  # an earlier build (built) first, then this one
//   BENCH_PATH='/api/v1/pages?page=1&pageSize=20' BENCH_RUNS=2 node bench/instructions.mjs
//   BENCH_FLOORS=1 node bench/instructions.mjs                   # also the framework's floor and the bare server
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { readDump, settledPhases } from './lib/callgrind.mjs'
import { readConfig } from './lib/config.mjs'
import { ensureDataset } from './lib/dataset.mjs'
import { ensureSqliteDatabase } from './lib/imports.mjs'
import { createApiKey, lecternHome, snapshotBuild, startLectern } from './lib/lectern.mjs'
import { startReplay, writeFixture } from './lib/replay.mjs'
import { median } from './lib/stats.mjs'

const PATH = process.env.BENCH_PATH ?? '/api/v1/forms?page=1&pageSize=20'
const WARMUP = Number(process.env.BENCH_WARMUP_REQUESTS ?? 30_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2_000)
const PHASES = Number(process.env.BENCH_PHASES ?? 4)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4)
const RUNS = Number(process.env.BENCH_RUNS ?? 1)
const FLOORS = process.env.BENCH_FLOORS === '1'

const config = readConfig()
const log = (message) => process.stderr.write(`[instructions] ${message}\n`)
// callgrind_control finds valgrind's control pipe by a name holding USER and HOST as each of them
// reads these: both get the same, USER because a shell without a login may not have it, HOST
// because the server reads it as its listening address (which `startLectern` sets).
const names = { USER: process.env.USER ?? userInfo().username, HOST: '127.0.0.1' }
const controlEnv = { ...process.env, ...names }

/** Sends `count` requests over `agent`'s connections, each connection sending its next when its last is answered. */
async function load(port, key, agent, count) {
  let left = count
  const one = () =>
    new Promise((resolve, reject) => {
      const req = request({ port, path: PATH, agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
        res.resume()
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`${PATH} answered ${res.statusCode}`)),
        )
      })
      req.on('error', reject)
      req.end()
    })
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (left-- > 0) await one()
    }),
  )
}

/** One server under callgrind (`start` given valgrind's command): each phase's instructions per request, main thread and the others. */
async function count(start, key, dir) {
  const outFile = join(dir, `callgrind-${Date.now()}.out`)
  const server = await start([
    'valgrind',
    '--quiet',
    '--tool=callgrind',
    '--separate-threads=yes',
    `--callgrind-out-file=${outFile}`,
  ])
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  try {
    await load(server.port, key, agent, WARMUP)
    const phases = []
    for (let dump = 1; dump <= PHASES; dump++) {
      execFileSync('callgrind_control', ['--zero', String(server.pid)], { env: controlEnv, stdio: 'ignore' })
      await load(server.port, key, agent, REQUESTS)
      execFileSync('callgrind_control', ['--dump', String(server.pid)], { env: controlEnv, stdio: 'ignore' })
      const { main, others } = readDump(outFile, dump)
      phases.push({ main: main / REQUESTS, others: others / REQUESTS })
    }
    return phases
  } finally {
    agent.destroy()
    await server.stop()
  }
}

const dataset = ensureDataset(config.dataDir, config.seed, 1000, log)
const source = await ensureSqliteDatabase(dataset, config, log)
const dir = mkdtempSync(join(tmpdir(), 'lectern-instructions-'))
try {
  const builds = [{ name: 'this build', home: lecternHome() }]
  if (process.env.BENCH_BEFORE_DIR) {
    const before = snapshotBuild(process.env.BENCH_BEFORE_DIR, join(dir, 'build-before'))
    builds.unshift({ name: 'before', home: before })
  }
  copyFileSync(source.file, join(dir, 'lectern.db'))
  const url = `sqlite:${join(dir, 'lectern.db')}`
  const key = await createApiKey(url)
  const servers = builds.map((build) => ({
    name: build.name,
    start: (wrapper) => startLectern(url, { from: build.home, env: names, wrapper }),
  }))
  if (FLOORS) {
    // The floors replay this build's answer: the same status, headers and body, byte for byte.
    const lectern = await startLectern(url)
    const fixture = join(dir, 'fixture.json')
    await writeFixture(lectern.port, PATH, key, fixture).finally(() => lectern.stop())
    for (const [name, script] of [
      ['framework', 'framework-server.mjs'],
      ['bare', 'bare-server.mjs'],
    ])
      servers.push({ name, start: (wrapper) => startReplay(script, fixture, { wrapper, env: names }) })
  }
  const settled = new Map(servers.map((server) => [server.name, []]))
  for (let run = 0; run < RUNS; run++) {
    for (const server of servers) {
      log(
        `${server.name}: ${WARMUP} requests, then ${PHASES} phases of ${REQUESTS} (${CONNECTIONS} connections)`,
      )
      const phases = await count(server.start, key, dir)
      const shown = phases.map(({ main, others }) => `${Math.round(main)} + ${Math.round(others)}`)
      log(`${server.name}: main thread + other threads per request: ${shown.join(', ')}`)
      settled.get(server.name).push(...settledPhases(phases).map((phase) => phase.main))
    }
  }
  console.log(`${PATH}, instructions of the main thread per request (median of the settled phases):`)
  for (const [name, values] of settled) {
    const result =
      values.length === 0
        ? 'no settled phase: raise BENCH_WARMUP_REQUESTS'
        : `${Math.round(median(values))} (${values.length} phases, ${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`
    console.log(`  ${name.padEnd(10)} ${result}`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
