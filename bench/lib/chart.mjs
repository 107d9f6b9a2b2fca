import { sizeLabel } from './dataset.mjs'

const COLORS = { bare: '#8c8c8c', sqlite: '#1f6fb4', postgres: '#e07b12', directus: '#6644ff' }
const NAMES = {
  bare: 'bare node:http',
  sqlite: 'Lectern, SQLite',
  postgres: 'Lectern, PostgreSQL + Redis',
  directus: 'Directus (peer)',
}
const ORDER = ['bare', 'sqlite', 'postgres', 'directus']

const WIDTH = 980
const LABEL_WIDTH = 360
const PLOT_WIDTH = WIDTH - LABEL_WIDTH - 70
const BAR = 9
const BAR_GAP = 2
const GROUP_GAP = 10

const escapeXml = (text) =>
  String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c])
const fixed = (n) => Number(n.toFixed(1))

/** A log-scale axis covering every value, from a power of ten to a power of ten. */
function logScale(values) {
  const positive = values.filter((v) => v > 0)
  const low = Math.floor(Math.log10(Math.min(...positive, 1)))
  const high = Math.ceil(Math.log10(Math.max(...positive, 10)))
  const span = Math.max(1, high - low)
  return {
    x: (v) => LABEL_WIDTH + (PLOT_WIDTH * (Math.log10(Math.max(v, 10 ** low)) - low)) / span,
    ticks: Array.from({ length: span + 1 }, (_, i) => 10 ** (low + i)),
  }
}

const formatMs = (v) => (v >= 100 ? String(Math.round(v)) : v >= 10 ? v.toFixed(1) : v.toFixed(2))
const tickLabel = (v) => (v >= 1000 ? `${v / 1000}k` : v >= 1 ? String(v) : String(Number(v.toPrecision(1))))

/**
 * The runs drawn: a run that read with and without writes in alternate slices is drawn as its two
 * sides, each with the answers of its own slices.
 */
function chartedRuns(runs) {
  return runs.flatMap((run) => {
    if (!run.interleaved) return [run]
    const side = (on) => ({
      ...run,
      scenario: `${run.scenario}:${on ? 'with' : 'without'}`,
      title: run.title.replace(/without and with (.*)$/, on ? 'with $1' : 'without writes'),
      reqPerSec: run.interleaved[on ? 'on' : 'off'].reqPerSec,
      latencyMs: run.interleaved[on ? 'on' : 'off'].latencyMs,
    })
    return [side(false), side(true)]
  })
}

/**
 * A hand-drawn SVG of every scenario: throughput (req/s) and latency (p50 solid, p99 light) per
 * server, both on log scales so that the bare server and a slow deep page fit on one chart.
 */
export function renderChart(results) {
  const groups = []
  for (const run of chartedRuns(results.runs)) {
    let group = groups.find((g) => g.dataset === run.dataset && g.scenario === run.scenario)
    if (!group) {
      group = { dataset: run.dataset, scenario: run.scenario, title: run.title, runs: [] }
      groups.push(group)
    }
    group.runs.push(run)
  }
  for (const group of groups) group.runs.sort((a, b) => ORDER.indexOf(a.server) - ORDER.indexOf(b.server))

  const parts = []
  let y = 20
  const main = sizeLabel(results.settings.sizes[results.settings.sizes.length - 1])
  parts.push(
    `<text x="10" y="${y}" font-size="15" font-weight="bold">Lectern benchmark, ${escapeXml(results.startedAt.slice(0, 10))} (${escapeXml(results.mode)} run, main dataset ${escapeXml(main)})</text>`,
  )
  y += 22
  let legendX = 10
  for (const server of ORDER) {
    if (!results.runs.some((r) => r.server === server)) continue
    parts.push(`<rect x="${legendX}" y="${y - 10}" width="12" height="12" fill="${COLORS[server]}"/>`)
    parts.push(`<text x="${legendX + 16}" y="${y}" font-size="12">${escapeXml(NAMES[server])}</text>`)
    legendX += 24 + NAMES[server].length * 7
  }

  const panel = (title, values, drawGroup) => {
    y += 34
    parts.push(`<text x="10" y="${y}" font-size="13" font-weight="bold">${escapeXml(title)}</text>`)
    y += 10
    const scale = logScale(values)
    const top = y
    // Grid lines go under the bars: remember where they belong and insert them once the height is known.
    const gridAt = parts.length
    for (const group of groups) {
      const height = group.runs.length * (BAR + BAR_GAP)
      const label = `${group.title} (${group.dataset})`
      parts.push(
        `<text x="${LABEL_WIDTH - 8}" y="${fixed(y + height / 2 + 3)}" font-size="11" text-anchor="end">${escapeXml(label.length > 62 ? `${label.slice(0, 61)}…` : label)}</text>`,
      )
      for (const run of group.runs) {
        drawGroup(run, scale, y)
        y += BAR + BAR_GAP
      }
      y += GROUP_GAP
    }
    const grid = scale.ticks.flatMap((tick) => {
      const x = fixed(scale.x(tick))
      return [
        `<line x1="${x}" y1="${top - 4}" x2="${x}" y2="${y - GROUP_GAP + 2}" stroke="#ddd"/>`,
        `<text x="${x}" y="${y + 8}" font-size="10" text-anchor="middle" fill="#555">${tickLabel(tick)}</text>`,
      ]
    })
    parts.splice(gridAt, 0, ...grid)
    y += 12
  }

  panel(
    'Throughput, requests per second (log scale)',
    results.runs.map((r) => r.reqPerSec),
    (run, scale, rowY) => {
      const end = scale.x(run.reqPerSec)
      parts.push(
        `<rect x="${LABEL_WIDTH}" y="${rowY}" width="${fixed(Math.max(1, end - LABEL_WIDTH))}" height="${BAR}" fill="${COLORS[run.server]}"/>`,
      )
      parts.push(
        `<text x="${fixed(end + 4)}" y="${rowY + BAR - 1}" font-size="9" fill="#333">${Math.round(run.reqPerSec).toLocaleString('en-US')}</text>`,
      )
    },
  )
  panel(
    'Latency in milliseconds: p50 (solid) and p99 (light) (log scale)',
    results.runs.flatMap((r) => [r.latencyMs.p50, r.latencyMs.p99]).filter((v) => v !== null),
    (run, scale, rowY) => {
      if (run.latencyMs.p99 === null) return
      const p99 = scale.x(run.latencyMs.p99)
      const p50 = scale.x(run.latencyMs.p50)
      parts.push(
        `<rect x="${LABEL_WIDTH}" y="${rowY}" width="${fixed(Math.max(1, p99 - LABEL_WIDTH))}" height="${BAR}" fill="${COLORS[run.server]}" fill-opacity="0.35"/>`,
      )
      parts.push(
        `<rect x="${LABEL_WIDTH}" y="${rowY}" width="${fixed(Math.max(1, p50 - LABEL_WIDTH))}" height="${BAR}" fill="${COLORS[run.server]}"/>`,
      )
      parts.push(
        `<text x="${fixed(p99 + 4)}" y="${rowY + BAR - 1}" font-size="9" fill="#333">${formatMs(run.latencyMs.p99)}</text>`,
      )
    },
  )
  const height = y + 10
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" role="img">`,
    `<title>Lectern benchmark: throughput and latency per scenario and server</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n')
}
