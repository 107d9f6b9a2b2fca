// Measures what WAL checkpoints do to the commits of a serving connection: submissions inserted one
// at a time, in their own commit each, at a steady rate, as a server takes lone form posts, on a copy of an
// imported dataset; once with SQLite's own automatic checkpoints (inside every commit that passes a
// thousand pages of WAL) and once with Lectern's checkpoint thread (`backgroundCheckpoints`), in
// turn. Reports each commit's wall time (mean, p50, p99, the longest), the process's CPU per insert
// (the thread's included) and how large the WAL file ended. Run it after `npm run build`:
//   node bench/sqlite-checkpoints.mjs bench/data/lectern-100k
// The directory is one `npm run bench` made (its lectern.db and dataset.json). BENCH_INSERTS sets the
// inserts per measurement (default 3000), BENCH_RATE how many a second (default 200), BENCH_ROUNDS
// how many times each mode runs (default 2).
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

const dir = process.argv[2]
if (!dir) {
  console.error('usage: node bench/sqlite-checkpoints.mjs <dataset directory holding lectern.db>')
  process.exit(2)
}
const inserts = Number(process.env.BENCH_INSERTS ?? 3000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const rate = Number(process.env.BENCH_RATE ?? 200)
const dist = new URL('../dist/', import.meta.url)
const { openDatabase } = await import(new URL('db/database.js', dist).href)
const { param } = await import(new URL('db/prepared.js', dist).href)
const dataset = JSON.parse(readFileSync(join(dir, 'dataset.json'), 'utf8'))
const scratch = mkdtempSync(join(tmpdir(), 'lectern-checkpoints-'))
const data = JSON.stringify({
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  message: 'A question about the analytical engine, sent from the contact form of the site.',
})

/** One measurement: a fresh copy of the file, `inserts` lone inserts, the commits' wall times. */
async function measure(backgroundCheckpoints) {
  const file = join(scratch, 'lectern.db')
  for (const suffix of ['-wal', '-shm']) rmSync(file + suffix, { force: true })
  copyFileSync(join(dir, 'lectern.db'), file)
  const database = openDatabase(`sqlite:${file}`, { backgroundCheckpoints })
  const insert = database.prepare(
    database.db
      .insertInto('submissions')
      .values({
        id: param('id'),
        form_id: dataset.bigFormId,
        data,
        ip_address: '203.0.113.7',
        user_agent: 'Mozilla/5.0',
        referrer: null,
        submitted_by: null,
        is_read: 0,
        is_starred: 0,
        notes: null,
        created_at: param('at'),
        updated_at: param('at'),
      })
      .returning('id'),
  )
  const times = []
  const started = process.cpuUsage()
  const start = performance.now()
  for (let i = 0; i < inserts; i++) {
    // Each insert at its own moment of a steady schedule; a late one goes at once.
    const due = start + (i * 1000) / rate - performance.now()
    if (due > 0) await sleep(due)
    const at = new Date(Date.UTC(2030, 0, 1) + i).toISOString()
    const before = performance.now()
    await insert({ id: `submission_bench${String(i).padStart(12, '0')}`, at })
    times.push(performance.now() - before)
  }
  const first = times[0]
  const afterFirst = Math.max(...times.slice(1))
  const cpu = process.cpuUsage(started)
  const walBytes = statSync(`${file}-wal`).size
  await database.close()
  times.sort((a, b) => a - b)
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))]
  return {
    mode: backgroundCheckpoints ? 'checkpoint thread' : "SQLite's automatic",
    meanMs: times.reduce((sum, t) => sum + t, 0) / times.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    p999Ms: at(0.999),
    maxMs: times[times.length - 1],
    // The first commit reads the cold file's pages; the longest after it is the one a checkpoint made.
    firstMs: first,
    afterFirstMs: afterFirst,
    cpuUsPerInsert: (cpu.user + cpu.system) / inserts,
    walMB: walBytes / 1e6,
  }
}

const rows = []
try {
  for (let round = 1; round <= rounds; round++)
    for (const background of [false, true]) rows.push({ round, ...(await measure(background)) })
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
const fixed = (value, digits) => value.toFixed(digits)
console.log(
  `${inserts} lone inserts per measurement, ${rate} a second, into the ${dataset.bigFormSubmissions}-row form; Node ${process.version}`,
)
console.log(
  '| Round | Checkpoints | mean ms | p50 ms | p99 ms | p99.9 ms | longest ms | first ms | longest after the first ms | CPU µs per insert | WAL at the end MB |',
)
console.log('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
for (const r of rows)
  console.log(
    `| ${r.round} | ${r.mode} | ${fixed(r.meanMs, 3)} | ${fixed(r.p50Ms, 3)} | ${fixed(r.p99Ms, 2)} | ${fixed(r.p999Ms, 2)} | ${fixed(r.maxMs, 1)} | ${fixed(r.firstMs, 1)} | ${fixed(r.afterFirstMs, 1)} | ${fixed(r.cpuUsPerInsert, 0)} | ${fixed(r.walMB, 1)} |`,
  )
