import { sizeLabel } from './dataset.mjs'
import { median, medianInterval } from './stats.mjs'

// "Reads under writes" in `npm run bench`: page 1 of the form being written to, and every other
// list (another form, the forms, the pages, the redirects), each read while a second process writes
// to the big form at each rate, in alternate slices of one run: the writer's posts go to its own
// sink for a slice, then to the server for a slice, and so on (A/B/A/B). Both sides of each pair
// meet the same machine a fraction of a second apart, so a shared machine's drift, which moves req/s
// by a fifth between runs minutes apart, weighs on both alike, and the writer works alike on both
// sides on the load generator's core it shares; the median of the pairs' ratios is judged.

export const WRITE_RATES = [5, 50]

/**
 * The list whose runs the bare server repeats, answering that list's bytes and each post with a 201
 * (stored nowhere): the floor, what posts at each rate cost reads on the machine itself when the
 * server does almost nothing with them. Any list would do, as the bare server answers every one alike.
 */
export const FLOOR_LIST = 'forms'

const int = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'))
const ms = (n) => (n === null || n === undefined ? '–' : n >= 10 ? n.toFixed(1) : n.toFixed(2))
const times = (n) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : `${n.toFixed(2)}×`)
const DB = { sqlite: 'SQLite', postgres: 'PostgreSQL + Redis', bare: 'bare node:http' }

/** " (95% interval a–b)", and whether `target` lies inside it. */
export function intervalText(values, target) {
  const interval = medianInterval(values)
  if (interval === null) return { text: '', undecided: false }
  return {
    text: ` (95% interval ${interval.low.toFixed(2)}–${interval.high.toFixed(2)})`,
    undecided: interval.low < target && target <= interval.high,
  }
}

/**
 * The lists read, the one written to first: its page 1 changes with every write and must hold
 * 0.8× its reads without writes (p99 at most twice); the others must not notice (0.95×).
 */
export function readsUnderWritesLists(description) {
  const list = (path) => `${path}?page=1&pageSize=20`
  return [
    {
      name: 'written-form',
      label: `page 1 (20) of the ${sizeLabel(description.bigFormSubmissions)} form written to`,
      path: list(`/api/v1/forms/${description.bigFormId}/submissions`),
      total: description.bigFormSubmissions,
      written: true,
    },
    {
      name: 'other-form',
      label: `page 1 (20) of another form (${sizeLabel(description.smallFormSubmissions)})`,
      path: list(`/api/v1/forms/${description.smallFormId}/submissions`),
      total: description.smallFormSubmissions,
    },
    {
      name: 'forms',
      label: 'forms page 1 (20)',
      path: list('/api/v1/forms'),
      total: description.counts.forms,
    },
    {
      name: 'pages',
      label: 'pages (page-builder) page 1 (20)',
      path: list('/api/v1/page-builder'),
      total: description.counts.pages,
    },
    {
      name: 'redirects',
      label: 'redirects page 1 (20)',
      path: list('/api/v1/page-builder/redirects'),
      total: description.counts.redirects,
    },
  ]
}

/**
 * Every measurement of the scenario in the order taken: each list at each rate, one interleaved run
 * each (`timing`: its duration, warm-up and slice length). `writeKind` is the writer's (intake
 * posts or inbox updates).
 */
export function readsUnderWritesSteps(description, { writeKind, timing }) {
  const kind = writeKind === 'intake' ? 'posts (POST /f/{id})' : 'inbox updates'
  return readsUnderWritesLists(description).flatMap((target) =>
    WRITE_RATES.map((writes) => ({
      scenario: {
        id: `rw-${target.name}-${writes}`,
        group: 'reads-under-writes',
        list: target.name,
        listLabel: target.label,
        title: `Reads under writes: ${target.label}, without and with ${writes} ${kind}/s to the big form`,
        path: target.path,
        total: target.total,
        writes,
        writeKind,
        writeFormId: description.bigFormId,
        ...timing,
      },
    })),
  )
}

/** Whether a run belongs to this scenario (the main table and the chart leave them out). */
export const isReadsUnderWrites = (run) => run.scenario.startsWith('rw-')

/**
 * Per server, list and rate: each pair's ratio (req/s with writes to req/s without), their median,
 * and the p99 and server CPU per 1,000 reads of all slices of each side.
 */
export function readsUnderWritesCells(runs) {
  return runs
    .filter((run) => isReadsUnderWrites(run) && run.interleaved && run.interleaved.pairs.length > 0)
    .map((run) => {
      const { pairs, off, on } = run.interleaved
      return {
        server: run.server,
        list: run.list,
        label: run.listLabel ?? run.list,
        writes: run.writes,
        writesPerSec: run.writesPerSec ?? 0,
        written: run.list === 'written-form',
        pairs: pairs.map((pair) => pair.on.reqPerSec / pair.off.reqPerSec),
        ratio: median(pairs.map((pair) => pair.on.reqPerSec / pair.off.reqPerSec)),
        p99Ratio: on.latencyMs.p99 / off.latencyMs.p99,
        off,
        on,
      }
    })
}

/**
 * The targets' rows: ≥ 0.8× and p99 ≤ 2× for the list written to, ≥ 0.95× for every other list.
 * The bare server's runs are no target's: each row at a rate names the floor measured at it.
 */
export function evaluateReadsUnderWrites(results) {
  const cells = readsUnderWritesCells(results.runs)
  const floors = new Map(cells.filter((cell) => cell.server === 'bare').map((cell) => [cell.writes, cell]))
  return cells
    .filter((cell) => cell.server !== 'bare')
    .map((cell) => {
      const interval = intervalText(cell.pairs, cell.written ? 0.8 : 0.95)
      const floor = floors.get(cell.writes)
      return {
        scenario: `Reads under ${cell.writes} writes/s: ${cell.label}, ${DB[cell.server]}`,
        target: cell.written ? '≥ 0.8× req/s and p99 ≤ 2× without writes' : '≥ 0.95× req/s without writes',
        measured:
          `median ${times(cell.ratio)}${interval.text} of ${cell.pairs.length} pairs at ${cell.writesPerSec} writes/s ` +
          `(${int(cell.on.reqPerSec)} vs ${int(cell.off.reqPerSec)} req/s; p99 ${ms(cell.on.latencyMs.p99)} vs ${ms(cell.off.latencyMs.p99)} ms` +
          `${cell.written ? `, ${times(cell.p99Ratio)}` : ''}; server CPU ${cell.on.serverCpuMsPer1k ?? '–'} vs ${cell.off.serverCpuMsPer1k ?? '–'} ms / 1k reads)` +
          (floor
            ? `; the floor, bare node:http under the same posts: ${times(floor.ratio)}${intervalText(floor.pairs, 0.95).text}`
            : ''),
        pass: cell.written ? cell.ratio >= 0.8 && cell.p99Ratio <= 2 : cell.ratio >= 0.95,
        // The median decides; the interval says when the run could not tell the target from noise.
        undecided: interval.undecided,
      }
    })
}

/** The section of the report: each interleaved run, both sides, and its pairs' ratios. */
export function renderReadsUnderWrites(results) {
  const cells = readsUnderWritesCells(results.runs)
  if (cells.length === 0) return []
  const slice = results.runs.find((r) => r.interleaved)?.interleaved
  const lines = [
    '## Reads under writes',
    '',
    `Each list read for one run while the writer's posts go in turn to its own sink and to the server, ${slice.sliceMs} ms at a time ` +
      `(answers in the first and last ${slice.guardMs} ms of a slice are not counted): a ratio compares slices a fraction of a second apart, ` +
      'and the writer does the same work on both sides (with inbox updates, which have no sink, it pauses instead). ' +
      'Server CPU is the server process’s CPU time per 1,000 answers, which moves far less than req/s on a shared ' +
      'machine (for PostgreSQL it leaves out the database’s own processes). The bare `node:http` server, read the same way ' +
      'while the same posts reach it (answered 201, stored nowhere), is the floor: what posts at that rate cost reads on this machine ' +
      'when the server does almost nothing with them (the kernel taking them on the server’s core).',
    '',
    '| Server | List | Writes/s | Without: req/s | p99 ms | CPU ms / 1k | With: req/s | p99 ms | CPU ms / 1k | Median ratio | Each pair |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ]
  for (const cell of cells) {
    lines.push(
      `| ${DB[cell.server]} | ${cell.label} | ${cell.writesPerSec} | ${int(cell.off.reqPerSec)} | ${ms(cell.off.latencyMs.p99)} | ${cell.off.serverCpuMsPer1k ?? '–'} ` +
        `| ${int(cell.on.reqPerSec)} | ${ms(cell.on.latencyMs.p99)} | ${cell.on.serverCpuMsPer1k ?? '–'} | ${times(cell.ratio)} | ${cell.pairs.map((r) => r.toFixed(2)).join(', ')} |`,
    )
  }
  lines.push('')
  return lines
}
