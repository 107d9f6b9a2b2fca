// What one form post costs the server's core, at a given rate of posts: the CPU the server process
// uses per second with the writer posting, minus the same with the writer paused, divided by the
// posts. Both sides alternate in windows of a few seconds (A/B/A/B, the order flipped each pair), so
// a shared machine's drift weighs on both alike; the result is the mean difference with its 95%
// interval. On PostgreSQL + Redis it gives the same for their processes, which share the load
// generator's core in `npm run bench`. Optionally under a steady read load at a fixed rate
// (`BENCH_READS`), so the posts meet a server already busy reading. This is the figure the "other lists at 50 posts/s ≥ 0.95×" target
// hinges on: a read-saturated core gives the posts' share of it to them, not to the reads.
//
// On a copy of the 1k dataset's SQLite file (generated and imported on first use, as `npm run bench`
// does), or with BENCH_PG=1 on a database of its own on PostgreSQL (BENCH_PG_URL) with Redis
// (BENCH_REDIS_URL), dropped at the end. Run `npm run build` first: this measures dist/.
//
//   node bench/post-cost.mjs                          # 10 and 50 posts/s, no reads
//   BENCH_RATES=50,800 BENCH_READS=5000 node bench/post-cost.mjs
import { spawn } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readConfig } from './lib/config.mjs'
import { ensureDataset } from './lib/dataset.mjs'
import { ensureSqliteDatabase, importMeasured } from './lib/imports.mjs'
import { enableIntake } from './lib/intake-settings.mjs'
import { createApiKey, lecternHome, ROOT, startLectern } from './lib/lectern.mjs'
import { postgresExec, withDatabase } from './lib/postgres.mjs'
import {
  cpuSpentBetween,
  LOAD_CPU,
  onCpu,
  processCpuMs,
  processesCpuMs,
  stopProcess,
} from './lib/processes.mjs'
import { meanInterval } from './lib/stats.mjs'

const RATES = (process.env.BENCH_RATES ?? '10,50').split(',').map(Number)
const READS = Number(process.env.BENCH_READS ?? 0)
const PAIRS = Number(process.env.BENCH_PAIRS ?? 15)
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 2000)
/** Each window starts this long after the writer was switched, so no post of the other side is counted. */
const GUARD_MS = 200
const READ_PATH = '/api/v1/page-builder/redirects?page=1&pageSize=20'
const POSTGRES = process.env.BENCH_PG === '1'

const config = readConfig()
const log = (message) => process.stderr.write(`[post-cost] ${message}\n`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function database() {
  const dataset = ensureDataset(config.dataDir, config.seed, 1000, log)
  if (POSTGRES) {
    const name = `bench_post_cost_${process.pid}`
    await postgresExec(config.postgresUrl, `create database "${name}"`)
    const url = withDatabase(config.postgresUrl, name)
    await importMeasured(url, dataset.file)
    return {
      url,
      dataset,
      redisUrl: config.redisUrl,
      drop: () => postgresExec(config.postgresUrl, `drop database "${name}" with (force)`),
    }
  }
  const source = await ensureSqliteDatabase(dataset, config, log)
  const dir = mkdtempSync(join(tmpdir(), 'lectern-post-cost-'))
  copyFileSync(source.file, join(dir, 'lectern.db'))
  return {
    url: `sqlite:${join(dir, 'lectern.db')}`,
    dataset,
    drop: async () => rmSync(dir, { recursive: true }),
  }
}

/** The bench's writer (`lib/writer.mjs`) on the load generator's core, paused until told to post. */
async function startWriter(url, formId, rate, port) {
  const [command, args] = onCpu(LOAD_CPU, process.execPath, [
    join(ROOT, 'bench', 'lib', 'writer.mjs'),
    JSON.stringify({
      home: lecternHome(),
      databaseUrl: url,
      formId,
      rate,
      kind: 'intake',
      port,
      paused: true,
    }),
  ])
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => String(chunk).includes('READY') && resolve())
    child.once('exit', (code) => reject(new Error(`writer exited (${code})`)))
  })
  return child
}

/**
 * CPU (ms per second) over one window of `side`, the writer posting or paused: the server's, and on
 * PostgreSQL + Redis those servers' own (every process of the cluster, and Redis), which share the
 * load generator's core in `npm run bench`.
 */
async function cpuWhile(server, writer, side) {
  writer.kill(side === 'on' ? 'SIGUSR1' : 'SIGUSR2')
  await sleep(GUARD_MS)
  const before = processCpuMs(server.pid)
  const stores = POSTGRES
    ? { postgres: processesCpuMs('postgres'), redis: processesCpuMs('redis-server') }
    : null
  const started = performance.now()
  await sleep(WINDOW_MS)
  const perSecond = (ms) => (ms * 1000) / (performance.now() - started)
  return {
    server: perSecond(processCpuMs(server.pid) - before),
    ...(stores
      ? {
          postgres: perSecond(cpuSpentBetween(stores.postgres, processesCpuMs('postgres'))),
          redis: perSecond(cpuSpentBetween(stores.redis, processesCpuMs('redis-server'))),
        }
      : {}),
  }
}

async function measureRate(server, db, key, rate) {
  const writer = await startWriter(db.url, db.dataset.description.bigFormId, rate, server.port)
  let reader = null
  try {
    if (READS > 0) {
      const seconds = Math.ceil((PAIRS * 2 * (WINDOW_MS + GUARD_MS)) / 1000) + 20
      const [command, args] = onCpu(LOAD_CPU, join(ROOT, 'node_modules', '.bin', 'autocannon'), [
        '-c',
        '10',
        '-R',
        String(READS),
        '-d',
        String(seconds),
        '-H',
        `Authorization=Bearer ${key}`,
        `http://127.0.0.1:${server.port}${READ_PATH}`,
      ])
      reader = spawn(command, args, { stdio: 'ignore' })
    }
    // Warm-up: the post path's code optimized and the reads steady before anything is counted.
    writer.kill('SIGUSR1')
    await sleep(5000)
    const windows = { on: [], off: [] }
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 === 0 ? ['off', 'on'] : ['on', 'off']
      for (const side of order) windows[side].push(await cpuWhile(server, writer, side))
    }
    const perPost = (ms) => Math.round((ms * 1000) / rate)
    const avg = (values) => meanInterval(values).mean.toFixed(1)
    /** "<µs> ± <µs> µs of <whose> CPU per post (<off> → <on> ms/s)" for one process or group. */
    const cost = (part, whose) => {
      const { mean, halfWidth } = meanInterval(windows.on.map((on, i) => on[part] - windows.off[i][part]))
      const off = avg(windows.off.map((w) => w[part]))
      const on = avg(windows.on.map((w) => w[part]))
      return `${perPost(mean)} ± ${perPost(halfWidth)} µs of ${whose} CPU per post (${off} → ${on} ms/s)`
    }
    console.log(
      `${rate} posts/s${READS > 0 ? ` beside ${READS} reads/s` : ''}: ${cost('server', "the server's")}` +
        `${POSTGRES ? `; ${cost('postgres', "PostgreSQL's")}; ${cost('redis', "Redis's")}` : ''}` +
        ` (${PAIRS} pairs of ${WINDOW_MS} ms)`,
    )
  } finally {
    reader?.kill('SIGINT')
    await stopProcess(writer)
  }
}

const db = await database()
let server
try {
  await enableIntake(lecternHome(), db.url, db.dataset.description.bigFormId)
  const key = await createApiKey(db.url)
  server = await startLectern(db.url, {
    redisUrl: db.redisUrl,
    env: { TRUST_PROXY: 'true', INTAKE_RATE_LIMIT_PER_MINUTE: '1000000000' },
  })
  log(`${POSTGRES ? 'PostgreSQL + Redis' : 'SQLite'}, 1k dataset, server pid ${server.pid}`)
  for (const rate of RATES) await measureRate(server, db, key, rate)
} finally {
  await server?.stop()
  await db.drop()
}
