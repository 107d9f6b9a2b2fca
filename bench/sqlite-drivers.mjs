// Compares SQLite drivers on the running Node.js by the CPU time the process spends, which a busy
// machine moves far less than req/s: the API's query for page 1 of the big form (20 items, the hot
// list) and for random pages and page sizes (1–100) of it, through Lectern's own services, on an
// imported dataset. Run it once per driver and Node.js, alternating:
//   npm run build
//   LECTERN_SQLITE_DRIVER=node:sqlite node bench/sqlite-drivers.mjs bench/data/lectern-1M
//   LECTERN_SQLITE_DRIVER=better-sqlite3 node bench/sqlite-drivers.mjs bench/data/lectern-1M
// The directory is one `npm run bench` made (its lectern.db and dataset.json). BENCH_ROUNDS sets how
// many queries each measurement runs (default 3000).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const dir = process.argv[2]
if (!dir) {
  console.error('usage: node bench/sqlite-drivers.mjs <dataset directory holding lectern.db>')
  process.exit(2)
}
const rounds = Number(process.env.BENCH_ROUNDS ?? 3000)
const dist = new URL('../dist/', import.meta.url)
const { openDatabase } = await import(new URL('db/database.js', dist).href)
const { sqliteDriverName } = await import(new URL('db/dialects/sqlite-driver.js', dist).href)
const { createServices } = await import(new URL('services/index.js', dist).href)

const dataset = JSON.parse(readFileSync(join(dir, 'dataset.json'), 'utf8'))
const handle = openDatabase(`sqlite:${join(dir, 'lectern.db')}`)
const { content } = createServices(handle)
const formId = dataset.bigFormId
const total = dataset.bigFormSubmissions

// A fixed sequence of pages, the same for every driver: a linear congruential generator.
let state = 12345
const next = () => {
  state = (state * 1103515245 + 12345) % 2 ** 31
  return state / 2 ** 31
}

/** CPU microseconds per call of `query`, after `rounds / 10` calls of warm-up. */
async function cpuPerCall(query) {
  for (let i = 0; i < rounds / 10; i++) await query(i)
  const start = process.cpuUsage()
  for (let i = 0; i < rounds; i++) await query(i)
  const used = process.cpuUsage(start)
  return (used.user + used.system) / rounds
}

// One content version throughout, as the API passes it: the pager keeps the form's total and position
// index, and each call reads its page's rows, as a request does when the response cache misses.
const VERSION = 1
const hot = await cpuPerCall(() =>
  content.listSubmissionsJsonForForm(formId, { page: 1, pageSize: 20 }, VERSION),
)
const random = await cpuPerCall(() => {
  const pageSize = 1 + Math.floor(next() * 100)
  const page = 1 + Math.floor(next() * Math.ceil(total / pageSize))
  return content.listSubmissionsJsonForForm(formId, { page, pageSize }, VERSION)
})
await handle.close()

const row = {
  node: process.version,
  driver: sqliteDriverName(),
  rounds,
  hotListCpuUs: Math.round(hot),
  randomPageCpuUs: Math.round(random),
}
console.log(JSON.stringify(row))
