// `npm run bench`: generates the datasets, imports them through Lectern's CLI, then measures the
// same scenarios against a bare node:http server (the limit), Lectern on SQLite and Lectern on
// PostgreSQL + Redis, and writes bench/results/; then the intake run. Settings: see bench/README.md.
// `node bench/run.mjs intake`: the intake run alone; `node bench/run.mjs before-after`:
// reads under writes on the 1M dataset, an earlier build against this one.
import { spawn } from 'node:child_process'
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'
import { readConfig } from './lib/config.mjs'
import { ensureDataset, sizeLabel } from './lib/dataset.mjs'
import {
  checkDirectusAnswer,
  directusListPath,
  directusProblem,
  directusRandomPrefix,
  readDirectusConfig,
  seedDirectus,
} from './lib/directus.mjs'
import { buildFingerprint, ensureSqliteDatabase, importMeasured } from './lib/imports.mjs'
import { enableIntake } from './lib/intake-settings.mjs'
import {
  createApiKey,
  fetchRaw,
  lecternHome,
  ROOT,
  snapshotBuild,
  startLectern,
  useBuildSnapshot,
  waitUntilReady,
} from './lib/lectern.mjs'
import { writeModeReport } from './lib/mode-report.mjs'
import { postgresExec, postgresProblem, redisProblem, withDatabase } from './lib/postgres.mjs'
import {
  canPin,
  freePort,
  gnuTime,
  LOAD_CPU,
  machineBusyMs,
  onCpu,
  pinSelf,
  processCpuMs,
  readMemory,
  run,
  SERVER_CPU,
  sampleMemory,
  sleep,
  stopProcess,
} from './lib/processes.mjs'
import { FLOOR_LIST, readsUnderWritesSteps } from './lib/reads-under-writes.mjs'
import { writeReports } from './lib/report.mjs'

const config = readConfig()
const MODES = ['all', 'intake', 'before-after']
const mode = process.argv[2] ?? 'all'
if (!MODES.includes(mode)) {
  process.stderr.write(`usage: node bench/run.mjs [${MODES.join('|')}]\n`)
  process.exit(2)
}
/** Settings a server needs to take intake posts from many clients behind one proxy, never refusing one. */
const INTAKE_ENV = { TRUST_PROXY: 'true', INTAKE_RATE_LIMIT_PER_MINUTE: '1000000000' }
const started = Date.now()
const log = (message) =>
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0)}s] ${message}\n`)

/** Children to stop and the schema to drop if the run is interrupted or fails. */
const cleanups = new Set()
async function cleanUp() {
  for (const cleanup of [...cleanups].reverse()) {
    try {
      await cleanup()
    } catch (error) {
      log(`cleanup failed: ${error.message}`)
    }
  }
  cleanups.clear()
}
let stopping = false
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    stopping = true
    log(`${signal}: stopping`)
    await cleanUp()
    process.exit(130)
  })
}

try {
  await main()
} catch (error) {
  log(`failed: ${error.stack ?? error.message}`)
  process.exitCode = 1
} finally {
  await cleanUp()
}

async function main() {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js')))
    throw new Error('Lectern is not built: run `npm run build`')
  pinSelf()
  mkdirSync(config.dataDir, { recursive: true })
  await acquireLock()
  await waitForQuietMachine()
  useBuildSnapshot(join(config.dataDir, 'build'))
  if (mode === 'intake') return intakeRun()
  if (mode === 'before-after') return beforeAfterRun()

  const results = {
    startedAt: new Date(started).toISOString(),
    // Only a run of every scenario at every default size is for the record (`latest.md`).
    mode: config.quick ? 'quick' : config.partial ? 'partial' : 'full',
    settings: {
      seed: config.seed,
      sizes: config.sizes,
      durationS: config.duration,
      warmupS: config.warmup,
      soakDurationS: config.soakDuration,
      connections: config.connections,
      fixedRate: config.rate,
    },
    machine: await describeMachine(),
    datasets: [],
    imports: [],
    runs: [],
    soak: [],
    notes: [],
  }
  const note = (message) => {
    log(`note: ${message}`)
    results.notes.push(message)
  }
  // A failed or refused run is reported and the rest of the run goes on.
  const attempt = async (label, work) => {
    if (stopping) return
    try {
      const entry = await work()
      results.runs.push(entry)
      if (entry.non2xx + entry.errors > 0) {
        note(
          `${label}: ${entry.non2xx} non-2xx answers and ${entry.errors} errors (${JSON.stringify(entry.statusCodes)}).`,
        )
      }
    } catch (error) {
      note(`${label} failed: ${error.message.split('\n')[0]}`)
    }
  }
  if (!canPin) note('`taskset` is not available: server and load generator share all cores.')

  const databases = new Map()
  for (const size of config.sizes) {
    const dataset = ensureDataset(config.dataDir, config.seed, size, log)
    results.datasets.push({
      ...dataset.description,
      generated: dataset.generated,
      generateMs: dataset.generateMs,
    })
    const database = await ensureSqliteDatabase(dataset, config, log)
    results.imports.push({ dataset: sizeLabel(size), size, database: 'sqlite', ...database.import })
    databases.set(size, { dataset, database })
  }
  const primary = databases.get(config.mainSize)
  const mainLabel = sizeLabel(config.mainSize)
  const mainScenarios = scenariosFor(primary.dataset.description, { main: true }).filter(selected)
  // The whole group, or single runs by id (e.g. `rw-forms-50`).
  const rwSteps = readsUnderWritesSteps(primary.dataset.description, {
    writeKind: config.writer,
    timing: { duration: config.rwDuration, warmup: config.rwWarmup, sliceMs: config.rwSliceMs },
  }).filter(({ scenario }) => selected(scenario))
  // Reads under writes post through the intake: the big form takes posts, from many addresses.
  const intakeWrites = config.writer === 'intake' && rwSteps.length > 0
  const serverEnv = intakeWrites ? { env: INTAKE_ENV } : {}
  if (intakeWrites)
    await enableIntake(lecternHome(), primary.database.url, primary.dataset.description.bigFormId)

  // PostgreSQL + Redis: a fresh database per run, loaded with the main dataset.
  let postgres = null
  if (config.postgres) {
    const problems = [await postgresProblem(config.postgresUrl), await redisProblem(config.redisUrl)].filter(
      Boolean,
    )
    if (problems.length > 0) note(`PostgreSQL + Redis skipped: ${problems.join('; ')}`)
    else {
      postgres = await preparePostgres(primary.dataset, results)
      if (intakeWrites) await enableIntake(lecternHome(), postgres.url, primary.dataset.description.bigFormId)
    }
  } else {
    note('PostgreSQL + Redis skipped (BENCH_PG=0).')
  }

  // Lectern on SQLite (and on PostgreSQL + Redis): fetch each scenario's response for the bare
  // server, then measure. Each scenario runs on SQLite, on the bare server and on PostgreSQL one
  // right after the other, while the servers not measured idle: on a shared machine whose speed
  // drifts over minutes, a ratio is only fair between runs made seconds apart.
  const sqliteFixtures = new Map()
  const measureMain = async (sqlite, sqliteKey, pg) => {
    for (const scenario of mainScenarios) {
      await attempt(`sqlite ${scenario.id}`, async () =>
        measure('sqlite', mainLabel, scenario, await sqlite.current(), sqliteKey, primary.database.url),
      )
      // Reads under writes compare Lectern with itself without writes; the bare server has no data.
      await attempt(`bare ${scenario.id}`, () =>
        measureBare(mainLabel, scenario, sqliteFixtures.get(scenario.id)),
      )
      if (pg) {
        await attempt(`postgres ${scenario.id}`, async () =>
          measure('postgres', mainLabel, scenario, await pg.current(), postgres.key, postgres.url),
        )
      }
    }
    // Reads under writes compare Lectern with itself without writes, within one run: SQLite, then
    // PostgreSQL, at each step; on one list, the bare server too, with the posts sent to it (the floor).
    for (const { scenario } of rwSteps) {
      await attempt(`sqlite ${scenario.id}`, async () =>
        measure('sqlite', mainLabel, scenario, await sqlite.current(), sqliteKey, primary.database.url),
      )
      if (scenario.list === FLOOR_LIST && scenario.writeKind === 'intake') {
        await attempt(`bare ${scenario.id}`, async () => {
          const fixture = await fetchFixture((await sqlite.current()).port, sqliteKey, scenario, note)
          return measureBare(mainLabel, scenario, fixture)
        })
      }
      if (pg) {
        await attempt(`postgres ${scenario.id}`, async () =>
          measure('postgres', mainLabel, scenario, await pg.current(), postgres.key, postgres.url),
        )
      }
    }
  }
  if (mainScenarios.length + rwSteps.length > 0) {
    const sqliteKey = await createApiKey(primary.database.url)
    await withLectern(primary.database.url, serverEnv, async (sqlite) => {
      for (const scenario of mainScenarios) {
        const server = await sqlite.current()
        sqliteFixtures.set(scenario.id, await fetchFixture(server.port, sqliteKey, scenario, note))
      }
      if (!postgres) return measureMain(sqlite, sqliteKey, null)
      await withLectern(postgres.url, { redisUrl: config.redisUrl, ...serverEnv }, async (pg) => {
        for (const scenario of mainScenarios) {
          const server = await pg.current()
          const fixture = await fetchFixture(server.port, postgres.key, scenario, note)
          if (!fixture.body.equals(sqliteFixtures.get(scenario.id).body)) {
            note(`${scenario.id}: the PostgreSQL response body differs from the SQLite one.`)
          }
        }
        await measureMain(sqlite, sqliteKey, pg)
      })
    })
  }

  await measureDirectus(primary.dataset, mainLabel, results, note, attempt)

  // The smaller datasets: how the hot list and random pages change with the form's size.
  for (const size of config.sizes.filter((s) => s !== config.mainSize)) {
    const { dataset, database } = databases.get(size)
    const scenarios = scenariosFor(dataset.description, { main: false }).filter(selected)
    if (scenarios.length === 0) continue
    const key = await createApiKey(database.url)
    const fixtures = new Map()
    await withLectern(database.url, {}, async (lectern) => {
      for (const scenario of scenarios) {
        const server = await lectern.current()
        fixtures.set(scenario.id, await fetchFixture(server.port, key, scenario, note))
      }
      for (const scenario of scenarios) {
        await attempt(`sqlite ${scenario.id} (${sizeLabel(size)})`, async () =>
          measure('sqlite', sizeLabel(size), scenario, await lectern.current(), key),
        )
        await attempt(`bare ${scenario.id} (${sizeLabel(size)})`, () =>
          measureBare(sizeLabel(size), scenario, fixtures.get(scenario.id)),
        )
      }
    })
  }

  if (config.soakDuration > 0 && selected({ id: 'soak' })) {
    results.soak.push(...(await soak(primary, mainLabel, sqliteFixtures, note)))
  }

  if (postgres) {
    await postgres.drop()
    cleanups.delete(postgres.drop)
  }
  const withoutPostgres = results.runs.filter((r) => r.server !== 'postgres' && r.otherCpu !== null)
  const disturbed = withoutPostgres.filter((r) => r.otherCpu > 0.15)
  if (disturbed.length > 0) {
    const worst = disturbed.reduce((a, b) => (b.otherCpu > a.otherCpu ? b : a))
    note(
      `Other work used more than 15% of a core during ${disturbed.length} of the ${withoutPostgres.length} runs ` +
        `without PostgreSQL (up to ${Math.round(worst.otherCpu * 100)}%, during ${worst.server} ${worst.scenario} ` +
        `${worst.dataset}; see the "CPU elsewhere" column): those figures are less reliable.`,
    )
  }
  results.finishedAt = new Date().toISOString()
  const written = writeReports(results, config)
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; wrote ${written.join(', ')}`)
  // The whole bench ends with the intake run, unless the scenarios chosen leave it out.
  if (config.scenarios === null || config.scenarios.some((id) => id.startsWith('intake'))) await intakeRun()
}

function selected(scenario) {
  return (
    config.scenarios === null ||
    config.scenarios.includes(scenario.id) ||
    (scenario.group !== undefined && config.scenarios.includes(scenario.group))
  )
}

/** The scenarios measured on a dataset; the smaller datasets only get the hot list and random pages. */
function scenariosFor(description, { main }) {
  const big = description.bigFormId
  const list = (path) => `${path}?page=1&pageSize=20`
  const bigList = list(`/api/v1/forms/${big}/submissions`)
  const maxPage = Math.ceil(description.bigFormSubmissions / 100)
  const random100 = {
    prefix: `/api/v1/forms/${big}/submissions?`,
    pageSize: 100,
    maxPage,
    seed: `${config.seed}:pages`,
  }
  // The target's page no cache holds: a random page *and* page size (1–100) on each request.
  const random = { ...random100, pageSize: 'random', total: description.bigFormSubmissions }
  // The bare server answers every random page with the bytes of the middle one.
  const middlePage = `/api/v1/forms/${big}/submissions?page=${Math.ceil(maxPage / 2)}&pageSize=100`
  const formLabel = `${sizeLabel(description.bigFormSubmissions)} form`
  const all = [
    {
      id: 'hot-submissions',
      title: `Hot list: submissions page 1 (20) of the ${formLabel}`,
      path: bigList,
      total: description.bigFormSubmissions,
    },
    {
      id: 'hot-forms',
      title: 'Hot list: forms page 1 (20)',
      path: list('/api/v1/forms'),
      total: description.counts.forms,
    },
    {
      id: 'random-page',
      title: `Random page and pageSize (1–100) of the ${formLabel}`,
      path: middlePage,
      random,
      total: description.bigFormSubmissions,
    },
    {
      id: 'random-page-100',
      title: `Random page of the ${formLabel}, pageSize 100`,
      path: middlePage,
      random: random100,
      total: description.bigFormSubmissions,
    },
    {
      id: 'page-1-small',
      title: `Page 1 (20) of the ${sizeLabel(description.smallFormSubmissions)} form`,
      path: list(`/api/v1/forms/${description.smallFormId}/submissions`),
      total: description.smallFormSubmissions,
    },
    {
      id: 'pages',
      title: 'Pages (page-builder) page 1 (20)',
      path: list('/api/v1/page-builder'),
      total: description.counts.pages,
    },
    {
      id: 'redirects',
      title: 'Redirects page 1 (20)',
      path: list('/api/v1/page-builder/redirects'),
      total: description.counts.redirects,
    },
    {
      id: 'fixed-rate',
      title: `Hot list at ${config.rate} req/s (autocannon -R)`,
      path: bigList,
      total: description.bigFormSubmissions,
      overallRate: config.rate,
    },
    {
      id: 'fixed-rate-paced',
      title: `Hot list at ${config.rate} req/s, evenly paced`,
      path: bigList,
      total: description.bigFormSubmissions,
      paced: config.rate,
    },
    {
      id: 'random-page-1conn',
      title: `Random page, pageSize 100, one connection (${formLabel})`,
      path: middlePage,
      random: random100,
      total: description.bigFormSubmissions,
      connections: 1,
    },
  ]
  if (main) return all
  return all.filter((s) => s.id === 'hot-submissions' || s.id === 'random-page' || s.id === 'random-page-100')
}

/**
 * Fetches the scenario's response from Lectern, checks it (200, items, the dataset's total), and
 * keeps its exact bytes for the bare server.
 */
async function fetchFixture(port, key, scenario, note) {
  const response = await fetchRaw(port, scenario.path, { authorization: `Bearer ${key}` })
  if (response.status !== 200) {
    throw new Error(
      `${scenario.path} answered ${response.status}: ${response.body.toString('utf8').slice(0, 300)}`,
    )
  }
  const body = JSON.parse(response.body.toString('utf8'))
  if (!Array.isArray(body.data) || body.data.length === 0) {
    note(`${scenario.id}: ${scenario.path} returned no items.`)
  }
  if (body.meta?.total !== scenario.total) {
    note(
      `${scenario.id}: ${scenario.path} says meta.total ${body.meta?.total}; the dataset holds ${scenario.total}.`,
    )
  }
  return { status: response.status, rawHeaders: response.rawHeaders, body: response.body, meta: body.meta }
}

/**
 * Reads a SQLite database file once, so that the operating system's page cache holds it before the
 * first scenario: otherwise whichever scenario first reads rows no cache of Lectern's holds pays for
 * reading them from the disk (a 650 MB file left cold took the first random-page run from about
 * 2,300 to 1,600 req/s, with a p99 of 28 ms), and the scenarios after it do not.
 */
function warmFileCache(databaseUrl) {
  if (!databaseUrl.startsWith('sqlite:')) return
  const file = databaseUrl.slice('sqlite:'.length)
  const chunk = Buffer.allocUnsafe(8 << 20)
  for (const path of [file, `${file}-wal`]) {
    if (!existsSync(path)) continue
    const fd = openSync(path, 'r')
    try {
      while (readSync(fd, chunk, 0, chunk.length, null) > 0);
    } finally {
      closeSync(fd)
    }
  }
}

/**
 * Runs `work` with a Lectern server; `lectern.current()` gives the running server, starting a new
 * one if the last one exited (its exit is reported by the run it broke).
 */
async function withLectern(databaseUrl, options, work) {
  warmFileCache(databaseUrl)
  let server = null
  const start = async () => {
    server = await startLectern(databaseUrl, { nodeArgs: config.serverNodeArgs, ...options })
    server.from = options.from ?? lecternHome()
    server.build = options.build ?? null
    cleanups.add(server.stop)
  }
  const lectern = {
    async current() {
      if (server.child.exitCode === null && server.child.signalCode === null) return server
      cleanups.delete(server.stop)
      log('the server exited: starting a new one')
      await start()
      return server
    },
  }
  await start()
  try {
    return await work(lectern)
  } finally {
    await server.stop()
    cleanups.delete(server.stop)
  }
}

/**
 * Starts the process that writes to `formId` of `databaseUrl` at `rate` writes/s; resolves once it
 * writes. `stop()` ends it and resolves to the writes it made per second.
 */
async function startWriter(
  databaseUrl,
  formId,
  rate,
  { kind = 'updates', port, home = lecternHome(), paused = false, sink = false } = {},
) {
  // On the load generator's core: its posts are load, like the reads.
  const [command, args] = onCpu(LOAD_CPU, process.execPath, [
    join(ROOT, 'bench', 'lib', 'writer.mjs'),
    JSON.stringify({ home, databaseUrl, formId, rate, kind, port, paused, sink }),
  ])
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  const kill = () => stopProcess(child)
  cleanups.add(kill)
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr += chunk.toString('utf8')
  })
  const closed = new Promise((resolve) => child.on('close', resolve))
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk.toString('utf8')
      if (stdout.includes('READY\n')) resolve()
    })
    closed.then((code) => reject(new Error(`writer exited (${code}): ${stderr.slice(0, 500)}`)))
  })
  return {
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM')
      await closed
      cleanups.delete(kill)
      const match = /WROTE (\d+) ([\d.]+) (\d+)/.exec(stdout)
      if (match && Number(match[3]) > 0) log(`         the writer's ${match[3]} of ${match[1]} writes failed`)
      return match ? (Number(match[1]) - Number(match[3])) / Number(match[2]) : null
    },
  }
}

/** One load run against a server whose memory is sampled while it is measured (not while warming up). */
async function measure(server, dataset, scenario, target, key, databaseUrl) {
  const connections = scenario.connections ?? config.connections
  log(`${server.padEnd(8)} ${dataset.padEnd(4)} ${scenario.id}`)
  const load = {
    port: target.port,
    ...(target.origin ? { origin: target.origin } : {}),
    path: scenario.path,
    headers: key ? { authorization: `Bearer ${key}` } : {},
    connections,
    duration: scenario.duration ?? config.duration,
    warmup: scenario.warmup ?? config.warmup,
    ...(scenario.random ? { random: scenario.random } : {}),
    ...(scenario.overallRate ? { overallRate: scenario.overallRate } : {}),
    ...(scenario.paced ? { paced: scenario.paced } : {}),
    ...(scenario.post ? { post: scenario.post } : {}),
  }
  const loadBefore = loadavg()[0]
  let sampler = null
  let cpuBefore = null
  const writer =
    scenario.writes > 0
      ? await startWriter(databaseUrl, scenario.writeFormId, scenario.writes, {
          kind: scenario.writeKind,
          port: target.port,
          home: target.from,
          paused: scenario.sliceMs !== undefined,
          // Interleaved posts go to the writer's own sink between the slices that post to the server.
          sink: scenario.sliceMs !== undefined && scenario.writeKind === 'intake',
        })
      : null
  // Interleaved: the load generator turns the writer's posts to the server on and off, slice by slice.
  if (writer && scenario.sliceMs !== undefined)
    load.slices = { ms: scenario.sliceMs, writerPid: writer.pid, serverPid: target.pid }
  let result
  let writesPerSec = null
  try {
    result = await runLoad(load, () => {
      // A peer's process (Directus) is not ours to sample.
      if (target.pid === null) return
      sampler = sampleMemory(target.pid)
      cpuBefore = cpuSnapshot(target.pid)
    })
  } finally {
    if (writer) writesPerSec = await writer.stop()
  }
  const memory = sampler ? sampler.stop() : null
  const cpu = cpuBefore ? cpuSince(cpuBefore, target.pid, result.cpuMs) : null
  failIfExited(target)
  const entry = {
    server,
    ...(target.build ? { build: target.build } : {}),
    dataset,
    scenario: scenario.id,
    title: scenario.title,
    path: scenario.random
      ? `${scenario.random.prefix}page=<random>&pageSize=${scenario.random.pageSize === 'random' ? '<random>' : scenario.random.pageSize}`
      : scenario.path,
    connections,
    loadAverage: loadBefore,
    ...result,
    peakRssKb: memory?.peakRssKb ?? null,
    hwmKb: memory?.hwmKb ?? null,
    serverCpu: cpu?.server ?? null,
    otherCpu: cpu?.other ?? null,
    // The server's own CPU time per 1,000 answers: steadier than req/s on a shared machine.
    serverCpuMsPer1k: cpu && result.requests > 0 ? Math.round((cpu.serverMs / result.requests) * 1000) : null,
    ...(scenario.list ? { list: scenario.list, listLabel: scenario.listLabel } : {}),
    ...(scenario.writes !== undefined
      ? {
          writes: scenario.writes,
          writeKind: scenario.writeKind ?? 'updates',
          writesPerSec: writesPerSec === null ? 0 : Math.round(writesPerSec * 10) / 10,
        }
      : {}),
    // Posts: the answers that took one (201) per second, the figure a posting scenario is judged on.
    ...(scenario.post ? { acceptedPerSec: Math.round((result.ok / result.durationS) * 10) / 10 } : {}),
  }
  log(
    `         ${target.build ? `[${target.build}] ` : ''}${Math.round(entry.reqPerSec)} req/s, p50 ${entry.latencyMs.p50} ms, p99 ${entry.latencyMs.p99} ms` +
      `, RSS ${Math.round((entry.peakRssKb ?? 0) / 1024)} MB` +
      `${entry.serverCpuMsPer1k === null ? '' : `, server CPU ${entry.serverCpuMsPer1k} ms/1k req`}` +
      `${entry.writesPerSec === undefined ? '' : `, ${entry.writesPerSec} writes/s`}${entry.non2xx + entry.errors > 0 ? `, ${entry.non2xx} non-2xx, ${entry.errors} errors` : ''}`,
  )
  const sides = entry.interleaved
  if (sides) {
    log(
      `         without writes ${Math.round(sides.off.reqPerSec)} req/s, p99 ${sides.off.latencyMs.p99} ms, CPU ${sides.off.serverCpuMsPer1k} ms/1k; ` +
        `with ${Math.round(sides.on.reqPerSec)} req/s, p99 ${sides.on.latencyMs.p99} ms, CPU ${sides.on.serverCpuMsPer1k} ms/1k ` +
        `(${sides.pairs.length} pairs of ${sides.sliceMs} ms)`,
    )
  }
  return entry
}

/**
 * The peer: Directus answering the same questions (the hot list and random pages of the big form)
 * through its REST API, when DIRECTUS_URL and DIRECTUS_TOKEN point to an install; otherwise a note
 * says why it was skipped. Its process is not ours, so its memory and CPU are not sampled.
 */
async function measureDirectus(dataset, mainLabel, results, note, attempt) {
  const { config, skipped } = readDirectusConfig()
  if (!config) return note(skipped)
  if (!selected({ id: 'hot-submissions' }) && !selected({ id: 'random-page' })) return
  const problem = await directusProblem(config)
  if (problem) return note(problem)
  const seeded = await seedDirectus(config, dataset, log).catch((error) => {
    note(`Directus skipped: seeding failed (${error.message.split('\n')[0]}).`)
    return null
  })
  if (!seeded) return
  results.directus = { origin: config.origin, ...seeded }
  if (!seeded.reused)
    log(`  Directus seeded with ${seeded.rows} rows in ${(seeded.seedMs / 1000).toFixed(1)} s`)
  const { bigFormId, bigFormSubmissions } = dataset.description
  const maxPage = Math.ceil(bigFormSubmissions / 100)
  const scenarios = scenariosFor(dataset.description, { main: true })
    .filter((s) => s.id === 'hot-submissions' || s.id === 'random-page')
    .filter(selected)
    .map((s) =>
      s.random
        ? {
            ...s,
            path: directusListPath(bigFormId, Math.ceil(maxPage / 2), 100),
            random: { ...s.random, prefix: directusRandomPrefix(bigFormId), sizeParam: 'limit' },
          }
        : { ...s, path: directusListPath(bigFormId, 1, 20) },
    )
  const target = { origin: config.origin, pid: null, child: { exitCode: null, signalCode: null } }
  for (const scenario of scenarios) {
    const problems = await checkDirectusAnswer(config, scenario.path, bigFormSubmissions).catch((error) => [
      error.message,
    ])
    if (problems.length > 0) note(`directus ${scenario.id}: ${problems.join('; ')}.`)
    await attempt(`directus ${scenario.id}`, () =>
      measure('directus', mainLabel, scenario, target, config.token),
    )
  }
}

/** A server that exited during a run fails that run, with its exit status and the end of its log. */
function failIfExited(target) {
  const { exitCode, signalCode } = target.child
  if (exitCode === null && signalCode === null) return
  const log = target.stderr?.().trim().split('\n').slice(-5).join(' | ')
  throw new Error(
    `the server exited (${signalCode ?? `code ${exitCode}`}) during the run${log ? `: ${log}` : ''}`,
  )
}

function cpuSnapshot(pid) {
  const self = process.cpuUsage()
  return {
    at: performance.now(),
    machineMs: machineBusyMs(),
    serverMs: processCpuMs(pid),
    selfMs: (self.user + self.system) / 1000,
  }
}

/**
 * Where the CPU went during a measured run, in cores: the server's share, and everything outside
 * the server, the load generator and this harness (other work on the machine; for PostgreSQL runs
 * also PostgreSQL and Redis).
 */
function cpuSince(before, pid, loadGeneratorMs) {
  const after = cpuSnapshot(pid)
  const elapsedMs = after.at - before.at
  if (before.machineMs === null || before.serverMs === null || after.serverMs === null) return null
  const serverMs = after.serverMs - before.serverMs
  const otherMs =
    after.machineMs - before.machineMs - serverMs - (loadGeneratorMs ?? 0) - (after.selfMs - before.selfMs)
  const round = (v) => Math.round(v * 100) / 100
  return { server: round(serverMs / elapsedMs), other: round(Math.max(0, otherMs) / elapsedMs), serverMs }
}

/** Runs the load generator pinned to its core; `onMeasuring` fires when its warm-up is over. */
async function runLoad(options, onMeasuring) {
  const [command, args] = onCpu(LOAD_CPU, process.execPath, [
    join(ROOT, 'bench', 'lib', 'load-worker.mjs'),
    JSON.stringify(options),
  ])
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  const stop = () => stopProcess(child)
  cleanups.add(stop)
  let result = null
  let stderr = ''
  let pending = ''
  child.stdout.on('data', (chunk) => {
    pending += chunk.toString('utf8')
    let newline = pending.indexOf('\n')
    while (newline >= 0) {
      const line = pending.slice(0, newline)
      pending = pending.slice(newline + 1)
      if (line === 'MEASURING') onMeasuring()
      else if (line.startsWith('RESULT ')) result = JSON.parse(line.slice('RESULT '.length))
      newline = pending.indexOf('\n')
    }
  })
  child.stderr.on('data', (chunk) => {
    stderr += chunk.toString('utf8')
  })
  const code = await new Promise((resolve) => child.on('close', resolve))
  cleanups.delete(stop)
  if (code !== 0 || result === null)
    throw new Error(`load generator failed (${code}): ${stderr.slice(0, 2000)}`)
  return result
}

/** Starts the bare server with one response's bytes and measures the scenario against it. */
async function measureBare(dataset, scenario, fixture) {
  const bare = await startBare(fixture)
  try {
    return await measure('bare', dataset, scenario, bare, null, null)
  } finally {
    await bare.stop()
    cleanups.delete(bare.stop)
  }
}

async function startBare(fixture) {
  const file = join(config.dataDir, 'bare-fixture.json')
  writeFileSync(
    file,
    JSON.stringify({
      status: fixture.status,
      rawHeaders: fixture.rawHeaders,
      body: fixture.body.toString('base64'),
    }),
  )
  const port = await freePort()
  const [command, args] = onCpu(SERVER_CPU, process.execPath, [
    join(ROOT, 'bench', 'lib', 'bare-server.mjs'),
    file,
    String(port),
  ])
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  const stop = () => stopProcess(child)
  cleanups.add(stop)
  await waitUntilReady(port, '/', child)
  return { port, pid: child.pid, child, stop }
}

/**
 * Server memory over a long run on the main dataset: a fresh Lectern process answers random pages
 * of the big form for the soak duration; its RSS is sampled during the run and once more after
 * five idle seconds. The bare server gets the same load for the scenario duration, for the ratio.
 */
async function soak(primary, mainLabel, fixtures, note) {
  const scenario = scenariosFor(primary.dataset.description, { main: true }).find(
    (s) => s.id === 'random-page-100',
  )
  const key = await createApiKey(primary.database.url)
  const entries = []
  const runSoak = async (server, target, authKey, duration) => {
    log(`${server.padEnd(8)} ${mainLabel.padEnd(4)} soak for ${duration} s`)
    const atStart = readMemory(target.pid)
    let sampler = null
    const result = await runLoad(
      {
        port: target.port,
        path: scenario.path,
        headers: authKey ? { authorization: `Bearer ${authKey}` } : {},
        connections: config.connections,
        duration,
        warmup: 0,
        random: { ...scenario.random, seed: `${config.seed}:soak` },
      },
      () => {
        sampler = sampleMemory(target.pid, 250)
      },
    )
    const during = sampler.stop()
    failIfExited(target)
    await sleep(5000)
    const after = readMemory(target.pid)
    const entry = {
      server,
      dataset: mainLabel,
      durationS: duration,
      requests: result.requests,
      reqPerSec: result.reqPerSec,
      non2xx: result.non2xx,
      errors: result.errors,
      latencyMs: result.latencyMs,
      rssAtStartKb: atStart?.rssKb ?? null,
      peakRssKb: during.peakRssKb,
      hwmKb: after?.hwmKb ?? during.hwmKb,
      rssAfterKb: after?.rssKb ?? null,
    }
    log(
      `         ${result.requests} requests, RSS ${Math.round(entry.rssAtStartKb / 1024)} → peak ${Math.round(entry.peakRssKb / 1024)} MB, ${Math.round(entry.rssAfterKb / 1024)} MB after`,
    )
    return entry
  }
  await withLectern(primary.database.url, {}, async (lectern) => {
    entries.push(await runSoak('sqlite', await lectern.current(), key, config.soakDuration))
  })
  const fixture = fixtures.get('random-page-100')
  if (fixture) {
    const bare = await startBare(fixture)
    try {
      entries.push(await runSoak('bare', bare, null, Math.min(config.soakDuration, config.duration)))
    } finally {
      await bare.stop()
      cleanups.delete(bare.stop)
    }
  } else {
    note('soak: the bare server was not measured (random-page-100 was not selected).')
  }
  return entries
}

/** Creates this run's schema, imports the main dataset into it (timed) and creates a key. */
async function preparePostgres(dataset, results, { from = lecternHome(), build } = {}) {
  // A database of its own, dropped at the end: nothing else on the server is touched.
  const name = `bench_${build ? `${build}_` : ''}${Date.now().toString(36)}_${process.pid}`
  await postgresExec(config.postgresUrl, `CREATE DATABASE ${name}`)
  const drop = () => postgresExec(config.postgresUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  cleanups.add(drop)
  const url = withDatabase(config.postgresUrl, name)
  log(`importing the ${sizeLabel(dataset.description.size)} dataset into PostgreSQL (database ${name})`)
  const measured = await importMeasured(url, dataset.file, from)
  log(
    `  ${measured.output} in ${(measured.wallMs / 1000).toFixed(1)} s, peak RSS ${Math.round(measured.peakRssKb / 1024)} MB`,
  )
  results.imports.push({
    dataset: sizeLabel(dataset.description.size),
    size: dataset.description.size,
    database: 'postgres',
    ...(build ? { build } : {}),
    ...measured,
    measuredAt: new Date().toISOString(),
    cached: false,
  })
  // The import leaves PostgreSQL with every page it wrote dirty, which its checkpointer would write
  // out over the next minutes, under the measurements that follow (with the disk busy, fsyncs wait
  // and latency climbs on both databases). Written now, they cost the preparation, not the runs.
  const checkpointStarted = Date.now()
  await postgresExec(url, 'CHECKPOINT')
  log(`  checkpoint after the import: ${((Date.now() - checkpointStarted) / 1000).toFixed(1)} s`)
  const key = await createApiKey(url, from)
  return { url, key, drop }
}

async function describeMachine() {
  const git = async (...args) =>
    (await run('git', args, { cwd: ROOT }).catch(() => ({ stdout: '' }))).stdout.trim()
  const changed = await git('status', '--porcelain', '--', 'src')
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    pinned: canPin,
    peakRssFrom: gnuTime ? '/usr/bin/time -v' : '/proc VmHWM',
    loadAverage: loadavg(),
    commit: (await git('rev-parse', '--short', 'HEAD')) || null,
    build: buildFingerprint(),
    uncommittedChanges: changed !== '',
  }
}

/**
 * With `BENCH_WAIT_QUIET=<seconds>`, waits up to that long for the machine to be quiet (less than a
 * quarter of a core busy over five seconds) before measuring, since other work skews every figure.
 */
async function waitForQuietMachine() {
  if (config.waitQuietS <= 0) return
  const deadline = Date.now() + config.waitQuietS * 1000
  for (;;) {
    const before = machineBusyMs()
    await sleep(5000)
    const busy = (machineBusyMs() - before) / 5000
    if (busy < 0.25) return
    if (Date.now() >= deadline) {
      log(`the machine is still busy (${busy.toFixed(2)} cores): measuring anyway`)
      return
    }
    log(`waiting for a quiet machine (${busy.toFixed(2)} cores busy)`)
  }
}

/**
 * One run at a time: two runs would share the cores and the cached databases. A run waits for
 * another live one to finish.
 */
async function acquireLock() {
  const lock = join(config.dataDir, '.lock')
  for (let waited = 0; ; waited++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' })
      break
    } catch {
      const holder = Number(readFileSync(lock, 'utf8'))
      if (!Number.isInteger(holder) || holder <= 0 || !processAlive(holder)) {
        rmSync(lock, { force: true })
        continue
      }
      if (waited === 0) log(`another benchmark run (pid ${holder}) is in progress: waiting for it`)
      await sleep(2000)
    }
  }
  const release = () => rmSync(lock, { force: true })
  cleanups.add(release)
}

function processAlive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/** What every report of a run starts with: when, which settings, which machine. */
async function newResults(kind, extra = {}) {
  return {
    kind,
    startedAt: new Date(started).toISOString(),
    settings: {
      seed: config.seed,
      size: config.mainSize,
      durationS: config.duration,
      warmupS: config.warmup,
      connections: config.connections,
      ...extra,
    },
    machine: await describeMachine(),
    imports: [],
    runs: [],
    notes: [],
  }
}

/** A failed run is noted and the rest goes on, as in the main run. */
function attemptInto(results) {
  const note = (message) => {
    log(`note: ${message}`)
    results.notes.push(message)
  }
  const attempt = async (label, work, extra = {}) => {
    if (stopping) return
    try {
      const entry = { ...(await work()), ...extra }
      results.runs.push(entry)
      if (entry.non2xx + entry.errors > 0)
        note(
          `${label}: ${entry.non2xx} non-2xx answers and ${entry.errors} errors (${JSON.stringify(entry.statusCodes)}).`,
        )
    } catch (error) {
      note(`${label} failed: ${error.message.split('\n')[0]}`)
    }
  }
  return { note, attempt }
}

/** Copies a SQLite database (with its WAL) to `file`, a scratch copy a run may write to. */
function copySqlite(source, file) {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true })
  copyFileSync(source, file)
  if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${file}-wal`)
  return `sqlite:${file}`
}

/**
 * `node bench/run.mjs intake`: visitors' posts to the big form (`POST /f/{id}`, JSON) from
 * `BENCH_INTAKE_CLIENTS` concurrent clients, each post from one of as many addresses, with the
 * server trusting its proxy and a per-address limit that never refuses; then the hot list read
 * alone and while posts arrive at `BENCH_INTAKE_READ_RATE` per second. SQLite (a scratch copy of
 * the main dataset's database) and PostgreSQL + Redis (a fresh database), one after the other.
 */
async function intakeRun() {
  const results = await newResults('intake', {
    clients: config.intakeClients,
    readRate: config.intakeReadRate,
    readsDurationS: config.intakeReadsDuration,
    sliceMs: config.rwSliceMs,
  })
  const { note, attempt } = attemptInto(results)
  const dataset = ensureDataset(config.dataDir, config.seed, config.mainSize, log)
  const { bigFormId } = dataset.description
  const label = sizeLabel(config.mainSize)
  const cached = await ensureSqliteDatabase(dataset, config, log)
  const sqliteUrl = copySqlite(cached.file, join(config.dataDir, 'intake-scratch.db'))
  await enableIntake(lecternHome(), sqliteUrl, bigFormId)
  const sqliteKey = await createApiKey(sqliteUrl)
  let postgres = null
  if (config.postgres) {
    const problems = [await postgresProblem(config.postgresUrl), await redisProblem(config.redisUrl)].filter(
      Boolean,
    )
    if (problems.length > 0) note(`PostgreSQL + Redis skipped: ${problems.join('; ')}`)
    else {
      postgres = await preparePostgres(dataset, results)
      await enableIntake(lecternHome(), postgres.url, bigFormId)
    }
  }
  const body = JSON.stringify({
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    message: 'A question about the analytical engine, sent from the contact form of the site.',
  })
  const hot = `/api/v1/forms/${bigFormId}/submissions?page=1&pageSize=20`
  const scenarios = [
    {
      id: 'intake-posts',
      title: `Posts to the ${label} form (POST /f/{id}, JSON), ${config.intakeClients} clients at as many addresses`,
      path: `/f/${bigFormId}`,
      post: { body, contentType: 'application/json', addresses: config.intakeClients },
      connections: config.intakeClients,
    },
    {
      // Latency at the rate each database is asked to take, sent on a schedule: with clients that post
      // again the moment they are answered, latency is only the queue they make (100 / posts per second).
      id: 'intake-posts-paced',
      title: `Posts to the ${label} form at the target rate (1,000/s on SQLite, 500/s on PostgreSQL), evenly paced over ${config.intakeClients} clients`,
      path: `/f/${bigFormId}`,
      post: { body, contentType: 'application/json', addresses: config.intakeClients },
      connections: config.intakeClients,
      pacedBy: { sqlite: 1000, postgres: 500 },
    },
    {
      // One run with the writer turned off and on in turn (A/B/A/B), slice by slice: both sides of
      // each pair meet the same machine a fraction of a second apart.
      id: `intake-reads-${config.intakeReadRate}`,
      title: `Hot list of the ${label} form, without and with ${config.intakeReadRate} posts/s`,
      path: hot,
      writes: config.intakeReadRate,
      writeKind: 'intake',
      writeFormId: bigFormId,
      duration: config.intakeReadsDuration,
      sliceMs: config.rwSliceMs,
    },
  ].filter((s) => config.scenarios === null || config.scenarios.includes(s.id))
  const servers = [['sqlite', sqliteUrl, {}, sqliteKey]]
  if (postgres) servers.push(['postgres', postgres.url, { redisUrl: config.redisUrl }, postgres.key])
  await withEach(servers, async (running) => {
    for (const scenario of scenarios) {
      for (const [server, url, , key] of servers) {
        const paced = scenario.pacedBy ? { paced: scenario.pacedBy[server] } : {}
        await attempt(`${server} ${scenario.id}`, async () =>
          measure(server, label, { ...scenario, ...paced }, await running.get(server).current(), key, url),
        )
      }
    }
  })
  if (postgres) {
    await postgres.drop()
    cleanups.delete(postgres.drop)
  }
  results.finishedAt = new Date().toISOString()
  const written = writeModeReport(results, config)
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; wrote ${written.join(', ')}`)

  /** Starts a server per entry (with the intake settings) and runs `work` with all of them up. */
  async function withEach(list, work, running = new Map()) {
    if (list.length === 0) return work(running)
    const [[server, url, options], ...rest] = list
    return withLectern(url, { ...options, env: INTAKE_ENV }, async (lectern) => {
      running.set(server, lectern)
      return withEach(rest, work, running)
    })
  }
}

/**
 * `node bench/run.mjs before-after`: the build of an earlier commit (`BENCH_BEFORE_DIR`, built)
 * against this one on the main dataset, each with its own import: page 1 of the big form, page 1 of
 * the 1k form, the forms, pages and redirects lists, each with no writes and while inbox updates
 * (which both builds have) are written to the big form at each of `BENCH_AB_WRITES` per second;
 * every measurement `BENCH_AB_ROUNDS` times, before and after in turn (A/B/A/B), then the hot list
 * on the bare server. SQLite first, then PostgreSQL + Redis.
 */
async function beforeAfterRun() {
  if (!existsSync(join(config.beforeDir, 'dist', 'cli', 'main.js')))
    throw new Error(`no built tree at ${config.beforeDir} (BENCH_BEFORE_DIR): build the earlier commit there`)
  const before = snapshotBuild(config.beforeDir, join(config.dataDir, 'build-before'))
  const builds = [
    { build: 'before', from: before, name: 'lectern-before' },
    { build: 'after', from: lecternHome(), name: 'lectern' },
  ]
  // A tree exported with `git archive` is no repository: BENCH_BEFORE_COMMIT names its commit.
  const describe = async (dir) =>
    process.env.BENCH_BEFORE_COMMIT ||
    (existsSync(join(dir, '.git'))
      ? (
          await run('git', ['log', '-1', '--format=%h %s'], { cwd: dir }).catch(() => ({ stdout: '' }))
        ).stdout.trim()
      : null)
  const results = await newResults('before-after', {
    rounds: config.abRounds,
    writeRates: config.abWriteRates,
    before: {
      dir: config.beforeDir,
      build: buildFingerprint(before),
      commit: (await describe(config.beforeDir)) || null,
    },
  })
  const { note, attempt } = attemptInto(results)
  const dataset = ensureDataset(config.dataDir, config.seed, config.mainSize, log)
  const description = dataset.description
  const label = sizeLabel(config.mainSize)
  const list = (path) => `${path}?page=1&pageSize=20`
  const targets = [
    [
      'big',
      `page 1 (20) of the ${label} form (the one written)`,
      list(`/api/v1/forms/${description.bigFormId}/submissions`),
      description.bigFormSubmissions,
    ],
    [
      'small',
      `page 1 (20) of the ${sizeLabel(description.smallFormSubmissions)} form`,
      list(`/api/v1/forms/${description.smallFormId}/submissions`),
      description.smallFormSubmissions,
    ],
    ['forms', 'forms page 1 (20)', list('/api/v1/forms'), description.counts.forms],
    ['pages', 'pages page 1 (20)', list('/api/v1/page-builder'), description.counts.pages],
    [
      'redirects',
      'redirects page 1 (20)',
      list('/api/v1/page-builder/redirects'),
      description.counts.redirects,
    ],
  ]
  const scenarios = targets
    .flatMap(([name, title, path, total]) =>
      config.abWriteRates.map((writes) => ({
        id: `ab-${name}-${writes}`,
        target: name,
        title: `${title}, ${writes} inbox updates/s to the ${label} form`,
        path,
        total,
        writes,
        writeKind: 'updates',
        writeFormId: description.bigFormId,
      })),
    )
    .filter(
      (s) =>
        config.scenarios === null || config.scenarios.includes(s.id) || config.scenarios.includes(s.target),
    )

  const phases = [
    [
      'sqlite',
      async (b) => {
        const database = await ensureSqliteDatabase(dataset, config, log, { from: b.from, name: b.name })
        results.imports.push({ build: b.build, database: 'sqlite', ...database.import })
        return { url: database.url, key: await createApiKey(database.url, b.from), options: {} }
      },
    ],
  ]
  if (config.postgres) {
    const problems = [await postgresProblem(config.postgresUrl), await redisProblem(config.redisUrl)].filter(
      Boolean,
    )
    if (problems.length > 0) note(`PostgreSQL + Redis skipped: ${problems.join('; ')}`)
    else
      phases.push([
        'postgres',
        async (b) => {
          const pg = await preparePostgres(dataset, results, { from: b.from, build: b.build })
          return { url: pg.url, key: pg.key, drop: pg.drop, options: { redisUrl: config.redisUrl } }
        },
      ])
  }
  for (const [server, prepare] of phases) {
    if (stopping) break
    const prepared = []
    for (const b of builds) prepared.push({ ...b, ...(await prepare(b)) })
    const up = async (index, running) => {
      if (index === prepared.length) return measureAll(running)
      const b = prepared[index]
      return withLectern(b.url, { ...b.options, from: b.from, build: b.build }, async (lectern) =>
        up(index + 1, [...running, { ...b, lectern }]),
      )
    }
    const measureAll = async (running) => {
      for (const scenario of scenarios) {
        for (const b of running) {
          const fixture = await fetchFixture((await b.lectern.current()).port, b.key, scenario, note)
          if (scenario.id === 'ab-big-0' && b.build === 'after') b.fixture = fixture
        }
      }
      // Rounds outermost: each round measures every scenario once, each list at each write rate one
      // after the other, so a minute of other work on the machine lands on one round of each
      // comparison (which the median then sets aside), not on every round of one of them.
      for (let round = 1; round <= config.abRounds; round++) {
        for (const scenario of scenarios) {
          for (const b of running) {
            await attempt(
              `${server} ${b.build} ${scenario.id} #${round}`,
              async () => measure(server, label, scenario, await b.lectern.current(), b.key, b.url),
              { round },
            )
          }
          const fixture = running.find((b) => b.fixture)?.fixture
          if (scenario.id === 'ab-big-0' && fixture)
            await attempt(`bare ${scenario.id} #${round}`, () => measureBare(label, scenario, fixture), {
              round,
              phase: server,
            })
        }
      }
    }
    await up(0, [])
    for (const b of prepared) {
      if (!b.drop) continue
      await b.drop()
      cleanups.delete(b.drop)
    }
  }
  results.finishedAt = new Date().toISOString()
  const written = writeModeReport(results, config)
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; wrote ${written.join(', ')}`)
}
