import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { intervalText } from './reads-under-writes.mjs'
import { median } from './stats.mjs'

// The reports of `node bench/run.mjs intake` and `node bench/run.mjs before-after`: every
// measurement, then the figures each target is judged on. Written as
// `bench/results/<date>-<kind>.{json,md}` (the JSON is ignored by git).

const int = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'))
const ms = (n) => (n === null || n === undefined ? '–' : n >= 10 ? n.toFixed(1) : n.toFixed(2))
const mb = (kb) => (kb === null || kb === undefined ? '–' : String(Math.round(kb / 1024)))
const pct = (cores) => (cores === null || cores === undefined ? '–' : `${Math.round(cores * 100)}%`)
const times = (n) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : `${n.toFixed(2)}×`)
const verdict = (pass) => (pass === null ? 'n/a' : pass ? 'pass' : '**fail**')
const DB = { sqlite: 'SQLite', postgres: 'PostgreSQL + Redis', bare: 'bare node:http' }

function header(results) {
  const m = results.machine
  const s = results.settings
  return [
    `Started ${results.startedAt}, finished ${results.finishedAt}. Commit \`${m.commit}\` (build \`${m.build}\`)` +
      `${m.uncommittedChanges ? ' with uncommitted changes in src/' : ''}; ${m.cores} × ${m.cpu}, ${m.memoryGb} GB, ` +
      `Node ${m.node}; ${m.pinned ? 'server on CPU 0, load generator and writer on CPU 1' : 'not pinned'}; ` +
      `load average at start ${m.loadAverage.map((v) => v.toFixed(2)).join(' ')}.`,
    '',
    `Settings: ${JSON.stringify(s)}.`,
    '',
  ]
}

function runsTable(runs) {
  const lines = [
    '| Server | Build | Scenario | Writes/s (kind) | Round | req/s | Accepted/s | p50 ms | p99 ms | Server CPU | CPU elsewhere | Server CPU ms / 1k req | Peak RSS MB |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const r of runs) {
    // A run read without and with writes in alternate slices is shown as its two sides.
    const rows = r.interleaved
      ? [
          { ...r, ...r.interleaved.off, title: `${r.title}: slices without posts`, writesPerSec: 0 },
          { ...r, ...r.interleaved.on, title: `${r.title}: slices with posts` },
        ]
      : [r]
    for (const row of rows) {
      lines.push(
        `| ${DB[row.server] ?? row.server} | ${row.build ?? ''} | ${row.title} | ${row.writes === undefined ? '' : row.writesPerSec === 0 ? '0' : `${row.writesPerSec} (${row.writeKind})`} | ${row.round ?? ''} | ${int(row.reqPerSec)} | ${row.acceptedPerSec === undefined ? '' : int(row.acceptedPerSec)} | ${ms(row.latencyMs?.p50)} | ${ms(row.latencyMs?.p99)} | ${row.interleaved ? '' : pct(row.serverCpu)} | ${row.interleaved ? '' : pct(row.otherCpu)} | ${row.serverCpuMsPer1k ?? '–'} | ${mb(row.peakRssKb)} |`,
      )
    }
  }
  return lines
}

function intakeSummary(results) {
  const find = (server, id) => results.runs.find((r) => r.server === server && r.scenario === id) ?? null
  const lines = ['| Target | Server | Measured | Result |', '|---|---|---|---|']
  for (const server of ['sqlite', 'postgres']) {
    const posts = find(server, 'intake-posts')
    if (posts) {
      const floor = server === 'sqlite' ? 1000 : 500
      const perPostUs = posts.serverCpuMsPer1k === null ? null : posts.serverCpuMsPer1k
      lines.push(
        `| ≥ ${int(floor)} accepted posts/s | ${DB[server]} | ${int(posts.acceptedPerSec)} posts/s (server CPU ${perPostUs ?? '–'} µs per post, at ${pct(posts.serverCpu)} of a core) | ${verdict(posts.acceptedPerSec >= floor)} |`,
        `| RSS ≤ 150 MB | ${DB[server]} | peak ${mb(posts.peakRssKb)} MB | ${verdict(posts.peakRssKb <= 150 * 1024)} |`,
      )
      // p99 is judged at the target rate, sent on a schedule; at saturation it is only the queue that
      // closed-loop clients build (Little's law: mean = clients / posts per second), shown for reference.
      const paced = find(server, 'intake-posts-paced')
      lines.push(
        paced
          ? `| p99 ≤ 50 ms at ${int(floor)} posts/s | ${DB[server]} | p99 ${ms(paced.latencyMs.p99)} ms, p50 ${ms(paced.latencyMs.p50)} ms at ${int(paced.acceptedPerSec)} accepted/s (saturated, ${posts.connections} clients back to back: p99 ${ms(posts.latencyMs.p99)} ms) | ${verdict(paced.latencyMs.p99 <= 50 && paced.acceptedPerSec >= floor * 0.98)} |`
          : `| p99 ≤ 50 ms | ${DB[server]} | saturated only, ${posts.connections} clients back to back: p99 ${ms(posts.latencyMs.p99)} ms, p50 ${ms(posts.latencyMs.p50)} ms | ${verdict(posts.latencyMs.p99 <= 50)} |`,
      )
    }
    // One run reads the hot list while the writer is turned off and on in turn, slice by slice; the
    // median of the pairs' ratios is judged, so that a disturbed moment does not decide it.
    const reads = results.runs.find(
      (r) => r.server === server && r.scenario.startsWith('intake-reads-') && r.interleaved,
    )
    if (reads && reads.interleaved.pairs.length > 0) {
      const { pairs, off, on } = reads.interleaved
      const ratios = pairs.map((pair) => pair.on.reqPerSec / pair.off.reqPerSec)
      const ratio = median(ratios)
      const interval = intervalText(ratios, 0.8)
      lines.push(
        `| hot list while posts arrive ≥ 0.8 × without | ${DB[server]} | median ${times(ratio)}${interval.text} of ${pairs.length} pairs of ${reads.interleaved.sliceMs} ms slices at ${reads.writesPerSec} posts/s ` +
          `(${int(on.reqPerSec)} vs ${int(off.reqPerSec)} req/s; p99 ${ms(on.latencyMs.p99)} vs ${ms(off.latencyMs.p99)} ms; server CPU ${on.serverCpuMsPer1k} vs ${off.serverCpuMsPer1k} ms / 1k reads) | ${verdict(ratio >= 0.8)}${interval.undecided ? ' (within noise)' : ''} |`,
      )
    }
  }
  return lines
}

/**
 * The median req/s, p99 and CPU per 1k over the rounds of one (server, build, scenario): a round
 * that other work on the machine disturbed moves a median far less than a mean.
 */
function abCell(runs, server, build, id) {
  const rows = runs.filter((r) => r.server === server && r.build === build && r.scenario === id)
  if (rows.length === 0) return null
  return {
    reqPerSec: median(rows.map((r) => r.reqPerSec)),
    p99: median(rows.map((r) => r.latencyMs?.p99 ?? null).filter((v) => v !== null)),
    cpu: median(rows.map((r) => r.serverCpuMsPer1k ?? null).filter((v) => v !== null)),
    peakRssKb: Math.max(...rows.map((r) => r.peakRssKb ?? 0)),
    each: rows.map((r) => Math.round(r.reqPerSec)),
  }
}

function beforeAfterSummary(results) {
  const { runs } = results
  const rates = results.settings.writeRates
  const targets = [...new Set(runs.filter((r) => r.build).map((r) => r.scenario.replace(/-\d+$/, '')))]
  const lines = [
    '**Median over the rounds** (req/s of each round in brackets); ratios against the same build and server with no writes.',
    '',
    '| Server | Scenario | Writes/s | Before req/s | Before p99 ms | Before CPU ms/1k | After req/s | After p99 ms | After CPU ms/1k | Before ratio | After ratio |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  const verdicts = ['| Target | Server | Build | Measured | Result |', '|---|---|---|---|---|']
  for (const server of ['sqlite', 'postgres']) {
    for (const target of targets) {
      for (const writes of rates) {
        const id = `${target}-${writes}`
        const b = abCell(runs, server, 'before', id)
        const a = abCell(runs, server, 'after', id)
        if (!a && !b) continue
        const base = (build) => abCell(runs, server, build, `${target}-0`)
        const ratio = (cell, build) => (cell && base(build) ? cell.reqPerSec / base(build).reqPerSec : null)
        lines.push(
          `| ${DB[server]} | ${target.replace(/^ab-/, '')} | ${writes} | ${int(b?.reqPerSec)} (${b?.each.join(', ') ?? ''}) | ${ms(b?.p99)} | ${int(b?.cpu)} | ${int(a?.reqPerSec)} (${a?.each.join(', ') ?? ''}) | ${ms(a?.p99)} | ${int(a?.cpu)} | ${writes === 0 ? '' : times(ratio(b, 'before'))} | ${writes === 0 ? '' : times(ratio(a, 'after'))} |`,
        )
        if (writes === 0) continue
        for (const [build, cell] of [
          ['before', b],
          ['after', a],
        ]) {
          const zero = base(build)
          if (!cell || !zero) continue
          const r = cell.reqPerSec / zero.reqPerSec
          if (target === 'ab-big') {
            const p99Ratio = cell.p99 / zero.p99
            verdicts.push(
              `| page 1 of the written form at ${writes}/s: ≥ 0.8× req/s, p99 ≤ 2× | ${DB[server]} | ${build} | ${times(r)} req/s, ${times(p99Ratio)} p99 (${ms(cell.p99)} vs ${ms(zero.p99)} ms); CPU ${int(cell.cpu)} vs ${int(zero.cpu)} ms/1k | ${verdict(r >= 0.8 && p99Ratio <= 2)} |`,
            )
          } else {
            verdicts.push(
              `| ${target.replace(/^ab-/, '')} at ${writes}/s: ≥ 0.95× req/s | ${DB[server]} | ${build} | ${times(r)} (${int(cell.reqPerSec)} vs ${int(zero.reqPerSec)}); CPU ${int(cell.cpu)} vs ${int(zero.cpu)} ms/1k | ${verdict(r >= 0.95)} |`,
            )
          }
        }
      }
    }
    for (const build of ['before', 'after']) {
      const big = abCell(runs, server, build, 'ab-big-0')
      const small = abCell(runs, server, build, 'ab-small-0')
      if (big && small) {
        const r = big.reqPerSec / small.reqPerSec
        verdicts.push(
          `| meta.total: page 1 of the 1M form within 10% of the 1k form | ${DB[server]} | ${build} | ${times(r)} (${int(big.reqPerSec)} vs ${int(small.reqPerSec)}) | ${verdict(r >= 0.9)} |`,
        )
      }
      const bare = runs.filter((r) => r.server === 'bare' && r.phase === server)
      if (big && bare.length > 0) {
        const r = big.reqPerSec / median(bare.map((x) => x.reqPerSec))
        verdicts.push(
          `| hot list ≥ 0.5 × bare node:http | ${DB[server]} | ${build} | ${times(r)} (${int(big.reqPerSec)} vs ${int(median(bare.map((x) => x.reqPerSec)))}) | ${verdict(r >= 0.5)} |`,
        )
      }
      const all = runs.filter((r) => r.server === server && r.build === build)
      if (all.length > 0) {
        const peak = Math.max(...all.map((r) => r.peakRssKb ?? 0))
        verdicts.push(
          `| RSS ≤ 150 MB | ${DB[server]} | ${build} | peak ${mb(peak)} MB | ${verdict(peak <= 150 * 1024)} |`,
        )
      }
    }
  }
  return [...verdicts, '', ...lines]
}

export function renderModeMarkdown(results) {
  const title =
    results.kind === 'intake' ? 'Benchmark: form intake' : 'Benchmark: reads under writes, before and after'
  const lines = [`# ${title}`, '', ...header(results)]
  if (results.kind === 'before-after') {
    const before = results.settings.before
    lines.push(
      `Before: \`${before.commit ?? before.dir}\` (build \`${before.build}\`); after: \`${results.machine.commit}\`.`,
      '',
    )
  }
  if (results.imports.length > 0) {
    lines.push(
      '## Imports',
      '',
      '| Build | Database | Wall | Peak RSS MB | Cached |',
      '|---|---|---|---|---|',
    )
    for (const i of results.imports)
      lines.push(
        `| ${i.build ?? ''} | ${i.database} | ${(i.wallMs / 1000).toFixed(1)} s | ${mb(i.peakRssKb)} | ${i.cached ? 'yes' : 'no'} |`,
      )
    lines.push('')
  }
  lines.push(
    '## Targets',
    '',
    ...(results.kind === 'intake' ? intakeSummary(results) : beforeAfterSummary(results)),
    '',
  )
  lines.push('## Every measurement', '', ...runsTable(results.runs), '')
  if (results.notes.length > 0) lines.push('## Notes', '', ...results.notes.map((n) => `- ${n}`), '')
  return lines.join('\n')
}

/**
 * Writes `bench/results/<date>-<kind>.json` and `.md`; a quick run's as `<date>-<kind>-quick.*`,
 * which, like the main run's quick reports, are for iterating and stay out of the record.
 */
export function writeModeReport(results, config) {
  const stamp = `${results.startedAt.slice(0, 10)}-${results.startedAt.slice(11, 16).replace(':', '')}`
  const name = `${stamp}-${results.kind}${config.quick ? '-quick' : ''}`
  writeFileSync(join(config.resultsDir, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`)
  writeFileSync(join(config.resultsDir, `${name}.md`), renderModeMarkdown(results))
  return [`bench/results/${name}.json`, `bench/results/${name}.md`]
}
