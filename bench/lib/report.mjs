import { spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { renderChart } from './chart.mjs'
import { sizeLabel } from './dataset.mjs'
import { ROOT } from './lectern.mjs'
import {
  evaluateReadsUnderWrites,
  isReadsUnderWrites,
  renderReadsUnderWrites,
} from './reads-under-writes.mjs'

const SERVER_NAMES = {
  bare: 'bare node:http',
  sqlite: 'Lectern, SQLite',
  postgres: 'Lectern, PostgreSQL + Redis',
  directus: 'Directus (peer)',
}

const int = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'))
const ms = (n) => {
  if (n === null || n === undefined) return '–'
  if (n >= 100) return String(Math.round(n))
  if (n >= 10) return n.toFixed(1)
  return n.toFixed(2)
}
const mb = (kb) => (kb === null || kb === undefined ? '–' : String(Math.round(kb / 1024)))
const times = (n) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : `${n.toFixed(2)}×`)
const percent = (cores) => (cores === null || cores === undefined ? '–' : `${Math.round(cores * 100)}%`)
const seconds = (msValue) => `${(msValue / 1000).toFixed(1)} s`
const divide = (a, b) => (a === null || a === undefined || !b ? null : a / b)

/** Each target (issues 5 and 15) with the measured figure, the ratio it is judged on, and pass/fail (null: not measured). */
export function evaluateTargets(results) {
  const main = sizeLabel(results.settings.sizes[results.settings.sizes.length - 1])
  const full = results.mode !== 'quick' && main === '1M'
  const find = (server, scenario) =>
    results.runs.find((r) => r.server === server && r.scenario === scenario && r.dataset === main) ?? null
  const rows = []
  const add = (scenario, target, measured, pass, verdict) =>
    rows.push({ scenario, target, measured, pass, verdict })
  const versus = (numerator, denominator, threshold, label, denominatorLabel) => {
    if (!numerator || !denominator) return { measured: 'not measured', pass: null }
    const value = numerator.reqPerSec / denominator.reqPerSec
    return {
      measured: `${value.toFixed(3)}× (${int(numerator.reqPerSec)} ${label} vs ${int(denominator.reqPerSec)} ${denominatorLabel} req/s)`,
      pass: value >= threshold,
    }
  }

  // The two pages are measured minutes apart, and this machine's speed drifts by a fifth in that
  // time (the bare server answering the same bytes moved as much): each is judged as its ratio to
  // the bare run beside it, which the drift moves alike.
  const totalCost = (big, bigBare, small, smallBare, label) => {
    if (!big || !small) return { measured: 'not measured', pass: null }
    if (!bigBare || !smallBare) return versus(big, small, 0.9, label, '1k')
    const bigRatio = big.reqPerSec / bigBare.reqPerSec
    const smallRatio = small.reqPerSec / smallBare.reqPerSec
    const value = bigRatio / smallRatio
    // The server's CPU per request, which the machine's drift moves far less: the page of the big
    // form against the small one's, directly.
    const cpu =
      big.serverCpuMsPer1k && small.serverCpuMsPer1k
        ? `; server CPU per request ${big.serverCpuMsPer1k} vs ${small.serverCpuMsPer1k} µs, ${(small.serverCpuMsPer1k / big.serverCpuMsPer1k).toFixed(2)}×`
        : ''
    return {
      measured: `${value.toFixed(3)}× (${bigRatio.toFixed(3)}× bare at ${label}: ${int(big.reqPerSec)} vs ${int(bigBare.reqPerSec)} req/s; ${smallRatio.toFixed(3)}× bare at 1k: ${int(small.reqPerSec)} vs ${int(smallBare.reqPerSec)} req/s${cpu})`,
      pass: value >= 0.9,
    }
  }

  for (const [id, label] of [
    ['hot-submissions', 'submissions'],
    ['hot-forms', 'forms'],
  ]) {
    const v = versus(find('sqlite', id), find('bare', id), 0.5, 'SQLite', 'bare')
    add(`Hot list (${label}), SQLite, authenticated + rate limited`, '≥ 0.5 × bare req/s', v.measured, v.pass)
  }
  for (const server of ['sqlite', 'postgres']) {
    const name = server === 'sqlite' ? 'SQLite' : 'PostgreSQL'
    const v = versus(find(server, 'random-page'), find(server, 'hot-submissions'), 0.25, 'random', 'hot')
    add(
      `Random page and pageSize (1–100) of the ${main} form, ${name}`,
      '≥ 0.25 × hot-list req/s',
      v.measured,
      v.pass,
    )
  }
  for (const server of ['sqlite', 'postgres']) {
    const name = server === 'sqlite' ? 'SQLite' : 'PostgreSQL'
    const v = versus(find(server, 'random-page-100'), find(server, 'hot-submissions'), 0, 'random', 'hot')
    add(
      `Random page of the ${main} form, pageSize 100, ${name}`,
      'none (reported)',
      v.measured,
      null,
      'reported',
    )
  }
  for (const server of ['sqlite', 'postgres']) {
    const name = server === 'sqlite' ? 'SQLite' : 'PostgreSQL'
    const run = find(server, 'random-page-1conn')
    const p99 = run?.latencyMs.p99 ?? null
    add(
      `Random page, DB time at any depth, ${name}`,
      '≤ 2 ms (bounded here by the whole request at one connection)',
      p99 === null ? 'not measured' : `p99 ${ms(p99)} ms, p50 ${ms(run.latencyMs.p50)} ms per request`,
      p99 === null ? null : p99 <= 2 ? true : null,
      p99 !== null && p99 > 2 ? 'not shown' : undefined,
    )
  }
  for (const server of ['sqlite', 'postgres']) {
    const name = server === 'sqlite' ? 'SQLite' : 'PostgreSQL'
    const small = results.datasets.find((d) => sizeLabel(d.size) === main)
    const distinct = small && small.smallFormId !== small.bigFormId
    const v = distinct
      ? totalCost(
          find(server, 'hot-submissions'),
          find('bare', 'hot-submissions'),
          find(server, 'page-1-small'),
          find('bare', 'page-1-small'),
          main,
        )
      : { measured: 'not measured', pass: null }
    add(
      `\`meta.total\`: page 1 of the ${main} form vs the 1k form, ${name}`,
      '≥ 0.9× (each as × bare)',
      v.measured,
      v.pass,
    )
  }
  {
    const v = versus(
      find('postgres', 'hot-submissions'),
      find('sqlite', 'hot-submissions'),
      0.6,
      'PostgreSQL',
      'SQLite',
    )
    add('PostgreSQL + Redis, hot list', '≥ 0.6 × SQLite req/s', v.measured, v.pass)
  }
  // The peer has no target: the ratio says how far ahead (or behind) Lectern is on the same rows.
  for (const [id, label] of [
    ['hot-submissions', 'hot list'],
    ['random-page', 'random page and pageSize'],
  ]) {
    const peer = find('directus', id)
    if (!peer) continue
    const v = versus(find('sqlite', id), peer, 0, 'SQLite', 'Directus')
    add(`Lectern vs Directus (peer), ${label}`, 'none (reported)', v.measured, null, 'peer')
  }
  for (const [server, scenario, how] of [
    ['sqlite', 'fixed-rate', 'autocannon -R'],
    ['sqlite', 'fixed-rate-paced', 'evenly paced'],
    ['postgres', 'fixed-rate', 'autocannon -R'],
    ['postgres', 'fixed-rate-paced', 'evenly paced'],
  ]) {
    const run = find(server, scenario)
    const rate = results.settings.fixedRate
    add(
      `Fixed rate ${int(rate)} req/s, hot list, ${server === 'sqlite' ? 'SQLite' : 'PostgreSQL + Redis'} (${how})`,
      'p99 ≤ 5 ms',
      run
        ? `p99 ${ms(run.latencyMs.p99)} ms, p50 ${ms(run.latencyMs.p50)} ms at ${int(run.reqPerSec)} req/s`
        : 'not measured',
      run ? run.latencyMs.p99 <= 5 && run.reqPerSec >= rate * 0.95 : null,
    )
  }
  for (const [database, limitS] of [
    ['sqlite', 30],
    ['postgres', 90],
  ]) {
    const entry = results.imports.find((i) => i.database === database && i.dataset === main)
    const name = database === 'sqlite' ? 'SQLite' : 'PostgreSQL'
    const note = entry?.cached
      ? ` (cached import, ${entry.measuredAt.slice(0, 16).replace('T', ' ')} UTC)`
      : ''
    add(
      `Import ${main} submissions (NDJSON), ${name}`,
      `≤ ${limitS} s${full ? '' : ' for 1M'}`,
      entry ? `${seconds(entry.wallMs)}${note}` : 'not measured',
      entry && full ? entry.wallMs <= limitS * 1000 : null,
    )
    add(
      `Import ${main}, ${name}: peak RSS`,
      `≤ 300 MB${full ? '' : ' for 1M'}`,
      entry ? `${mb(entry.peakRssKb)} MB${note}` : 'not measured',
      entry && full ? entry.peakRssKb <= 300 * 1024 : null,
    )
  }
  {
    const entry = results.soak.find((s) => s.server === 'sqlite')
    const long = entry && entry.durationS >= 60
    add(
      `Server under ${entry ? entry.durationS : 60} s of load on the ${main} dataset, SQLite`,
      `RSS ≤ 150 MB${full && long ? '' : ' (60 s on 1M)'}`,
      entry ? `peak ${mb(entry.peakRssKb)} MB, ${mb(entry.rssAfterKb)} MB after` : 'not measured',
      entry && full && long ? entry.peakRssKb <= 150 * 1024 : null,
    )
  }
  rows.push(...evaluateReadsUnderWrites(results))
  return rows
}

/** The run as Markdown: targets, every measurement with its ratio to the bare server, imports, memory. */
export function renderMarkdown(results, { chart } = {}) {
  const lines = []
  const m = results.machine
  const s = results.settings
  lines.push(
    `# Lectern benchmark, ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC (${results.mode} run)`,
  )
  lines.push('')
  lines.push(
    `Commit \`${m.commit ?? 'unknown'}\`${m.uncommittedChanges ? ' with uncommitted changes in `src/`' : ''} (build \`${m.build}\`); ` +
      `${m.cores} × ${m.cpu}, ${m.memoryGb} GB, Node ${m.node}; ` +
      (m.pinned ? 'server on CPU 0, load generator on CPU 1 (`taskset`); ' : 'no core pinning; ') +
      `${s.durationS} s per scenario after ${s.warmupS} s of warm-up, ${s.connections} connections; ` +
      `datasets ${s.sizes.map(sizeLabel).join(', ')} (seed \`${s.seed}\`); load average at start ${m.loadAverage[0].toFixed(2)}.`,
  )
  lines.push('')
  lines.push('## Targets')
  lines.push('')
  lines.push('| Scenario | Target | Measured | Result |')
  lines.push('|---|---|---|---|')
  for (const row of evaluateTargets(results)) {
    const verdict = row.verdict ?? (row.pass === true ? 'pass' : row.pass === false ? '**fail**' : 'n/a')
    lines.push(
      `| ${row.scenario} | ${row.target} | ${row.measured} | ${verdict}${row.undecided ? ' (within noise)' : ''} |`,
    )
  }
  lines.push('')
  if (chart) {
    lines.push(`![Throughput and latency per scenario](${chart})`)
    lines.push('')
  }
  lines.push('## Throughput and latency')
  lines.push('')
  lines.push(
    'Each Lectern figure is followed by its ratio to the bare `node:http` server answering the same bytes ' +
      'under the same load. Peak RSS is the server process during the measured run. Server CPU is the ' +
      "server process's CPU time during the run in % of one core; CPU elsewhere is what the rest of the " +
      'machine used besides the server, the load generator and the harness (for PostgreSQL runs this ' +
      'includes PostgreSQL and Redis; otherwise it is other work disturbing the measurement).',
  )
  lines.push('')
  lines.push(
    '| Scenario | Data | Server | req/s | × bare | p50 ms | × bare | p99 ms | × bare | peak RSS MB | × bare | non-2xx | server CPU | CPU elsewhere |',
  )
  lines.push('|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
  const groups = []
  for (const run of results.runs.filter((r) => !isReadsUnderWrites(r))) {
    const key = `${run.dataset}:${run.scenario}`
    if (!groups.includes(key)) groups.push(key)
  }
  const order = { bare: 0, sqlite: 1, postgres: 2, directus: 3 }
  for (const key of groups) {
    const runs = results.runs.filter((r) => `${r.dataset}:${r.scenario}` === key)
    runs.sort((a, b) => order[a.server] - order[b.server])
    const bare = runs.find((r) => r.server === 'bare')
    for (const run of runs) {
      const isBare = run.server === 'bare'
      const rel = (value, base) => (isBare ? '' : times(divide(value, base)))
      lines.push(
        `| ${run.title} | ${run.dataset} | ${SERVER_NAMES[run.server]} | ${int(run.reqPerSec)} | ${rel(run.reqPerSec, bare?.reqPerSec)} ` +
          `| ${ms(run.latencyMs.p50)} | ${rel(run.latencyMs.p50, bare?.latencyMs.p50)} ` +
          `| ${ms(run.latencyMs.p99)} | ${rel(run.latencyMs.p99, bare?.latencyMs.p99)} ` +
          `| ${mb(run.peakRssKb)} | ${rel(run.peakRssKb, bare?.peakRssKb)} | ${int(run.non2xx + run.errors)} ` +
          `| ${percent(run.serverCpu)} | ${percent(run.otherCpu)} |`,
      )
    }
  }
  lines.push('')
  lines.push(...renderReadsUnderWrites(results))
  lines.push('## Import (`lectern import file.ndjson`)')
  lines.push('')
  lines.push('| Dataset | Database | Records | Time | Peak RSS MB | Measured |')
  lines.push('|---|---|--:|--:|--:|---|')
  for (const entry of results.imports) {
    const dataset = results.datasets.find((d) => d.size === entry.size)
    const records = dataset ? Object.values(dataset.counts).reduce((sum, n) => sum + n, 0) : null
    lines.push(
      `| ${entry.dataset} | ${entry.database === 'sqlite' ? 'SQLite' : 'PostgreSQL'} | ${int(records)} | ${seconds(entry.wallMs)} ` +
        `| ${mb(entry.peakRssKb)} | ${entry.cached ? `cached, ${entry.measuredAt.slice(0, 16).replace('T', ' ')}` : 'this run'} |`,
    )
  }
  lines.push('')
  if (results.soak.length > 0) {
    lines.push('## Server memory under sustained load (random pages, pageSize 100)')
    lines.push('')
    lines.push(
      '| Server | Data | Duration | Requests | req/s | RSS at start MB | Peak RSS MB | × bare | VmHWM MB | RSS 5 s after MB |',
    )
    lines.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|')
    const bare = results.soak.find((e) => e.server === 'bare')
    for (const entry of results.soak) {
      lines.push(
        `| ${SERVER_NAMES[entry.server]} | ${entry.dataset} | ${entry.durationS} s | ${int(entry.requests)} | ${int(entry.reqPerSec)} ` +
          `| ${mb(entry.rssAtStartKb)} | ${mb(entry.peakRssKb)} | ${entry.server === 'bare' ? '' : times(divide(entry.peakRssKb, bare?.peakRssKb))} ` +
          `| ${mb(entry.hwmKb)} | ${mb(entry.rssAfterKb)} |`,
      )
    }
    lines.push('')
  }
  if (results.notes.length > 0) {
    lines.push('## Notes')
    lines.push('')
    for (const note of results.notes) lines.push(`- ${note}`)
    lines.push('')
  }
  return `${lines.join('\n')}`
}

/**
 * Writes `bench/results/<date>.json` and `<date>.md`; a full run also writes `latest.md` and
 * `latest.svg`, a quick or partial run `<date>-quick.*` or `<date>-partial.*` only (those are for
 * iterating, not for the record).
 */
export function writeReports(results, config) {
  const stamp = `${results.startedAt.slice(0, 10)}-${results.startedAt.slice(11, 16).replace(':', '')}`
  const name = results.mode === 'full' ? stamp : `${stamp}-${results.mode}`
  const written = []
  const write = (file, content) => {
    writeFileSync(join(config.resultsDir, file), content)
    written.push(`bench/results/${file}`)
  }
  write(`${name}.json`, `${JSON.stringify(results, null, 2)}\n`)
  const svg = renderChart(results)
  if (results.mode !== 'full') {
    write(`${name}.svg`, svg)
    write(`${name}.md`, renderMarkdown(results, { chart: `${name}.svg` }))
  } else {
    write(`${name}.md`, renderMarkdown(results))
    write('latest.svg', svg)
    write('latest.md', renderMarkdown(results, { chart: 'latest.svg' }))
    formatWithBiome(written.filter((file) => !file.endsWith('.json')))
  }
  return written
}

/** Lays the committed reports out as the repository's formatter would, so that `npm run lint` passes. */
function formatWithBiome(files) {
  const biome = join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome')
  if (!existsSync(biome)) return
  spawnSync(process.execPath, [biome, 'format', '--write', ...files], { cwd: ROOT, stdio: 'ignore' })
}
