// What the filters of `GET /api/v1/forms/{id}/submissions` cost on one form with 100,000
// submissions, against page 1 of the unfiltered list: windows of `since`/`until` of several widths,
// the `isRead`/`isStarred` flags, a deep page of a window, and the first request after a write (when
// the filtered total is counted again over its index). Real HTTP, one request at a time, with an
// API key. On a temporary SQLite file, or with BENCH_POSTGRES=1 on PostgreSQL (TEST_POSTGRES_URL,
// default postgres://postgres@127.0.0.1:5432/test) in a schema of its own, dropped at the end.
// BENCH_ROWS changes the row count. Run `npm run build` first: this measures dist/.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { buildApp } from '../dist/app.js'
import { openDatabase } from '../dist/db/database.js'
import { migrateToLatest } from '../dist/db/migrate.js'
import { MemoryRateLimiter } from '../dist/ratelimit/memory.js'
import { createServices } from '../dist/services/index.js'
import { postgresExec, withSchema } from './lib/postgres.mjs'
import { median } from './lib/stats.mjs'

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000)
/** Requests measured per figure (after two more not counted); BENCH_SAMPLES changes it. */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 21)
const postgres = process.env.BENCH_POSTGRES === '1'
const baseUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `bench_filters_${process.pid}`
const dir = mkdtempSync(join(tmpdir(), 'lectern-filters-'))
if (postgres) await postgresExec(baseUrl, `create schema "${schema}"`)
const database = openDatabase(postgres ? withSchema(baseUrl, schema) : `sqlite:${join(dir, 'filters.db')}`)
let app
try {
  await migrateToLatest(database)
  const db = database.db
  const stamp = '2024-01-01T00:00:00Z'
  await db
    .insertInto('users')
    .values({
      id: 'user_bench',
      email: 'bench@example.com',
      password_hash: 'unused: this user never signs in',
      role: 'global_admin',
      is_disabled: 0,
      created_at: stamp,
      updated_at: stamp,
    })
    .execute()
  const formId = 'form_benchfilters00000'
  await db
    .insertInto('forms')
    .values({
      id: formId,
      title: 'Contact',
      description: null,
      is_active: 1,
      created_at: stamp,
      updated_at: stamp,
    })
    .execute()

  // One submission a minute from 2020-01-01: 100,000 of them span about 69 days.
  const base = Date.parse('2020-01-01T00:00:00Z')
  const minute = (i) => new Date(base + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
  const t0 = performance.now()
  for (let start = 0; start < ROWS; start += 1000) {
    const rows = []
    for (let i = start; i < Math.min(ROWS, start + 1000); i++) {
      rows.push({
        id: `submission_bench${String(i).padStart(8, '0')}`,
        form_id: formId,
        data: JSON.stringify({
          name: `Person ${i}`,
          email: `person${i}@example.com`,
          message: `Hello, this is message number ${i}. Please call back.`,
        }),
        ip_address: '203.0.113.7',
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
        referrer: 'https://example.com/contact',
        submitted_by: null,
        is_read: i % 10 < 7 ? 1 : 0,
        is_starred: i % 15 === 7 ? 1 : 0,
        notes: null,
        created_at: minute(i),
        updated_at: minute(i),
      })
    }
    await db.insertInto('submissions').values(rows).execute()
  }
  // Statistics as a running database has them (autovacuum's analyze, or SQLite's `analyze`).
  await sql`analyze`.execute(db)
  console.log(
    `${postgres ? 'PostgreSQL' : 'SQLite'}: ${ROWS.toLocaleString('en')} submissions written in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )

  const services = createServices(database)
  const { plainKey } = await services.keys.createApiKey({ name: 'bench', userEmail: 'bench@example.com' })
  app = await buildApp({
    config: { ERROR_STYLE: 'code', LOG_LEVEL: 'warn' },
    services,
    limiter: new MemoryRateLimiter({ perHour: 1_000_000_000, perSecond: 1_000_000_000 }),
    database,
  })
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  const list = `/api/v1/forms/${formId}/submissions`
  const get = async (query) => {
    const res = await fetch(`${origin}${list}?${query}`, { headers: { authorization: `Bearer ${plainKey}` } })
    const body = await res.json()
    if (res.status !== 200) throw new Error(`${query} answered ${res.status}: ${JSON.stringify(body)}`)
    return body
  }
  const last = ROWS - 1
  const day = 24 * 60
  const windows = [
    ['page 1, unfiltered', ''],
    ['window: last hour', `since=${minute(last - 59)}&until=${minute(last + 1)}`],
    ['window: last day', `since=${minute(last - day + 1)}&until=${minute(last + 1)}`],
    [
      'window: 10% in the middle',
      `since=${minute(Math.floor(ROWS * 0.45))}&until=${minute(Math.floor(ROWS * 0.55))}`,
    ],
    ['window: whole form', `since=${minute(0)}&until=${minute(last + 1)}`],
    ['isRead=false', 'isRead=false'],
    ['isStarred=true', 'isStarred=true'],
    ['isRead=false&isStarred=true', 'isRead=false&isStarred=true'],
    [
      '10% window + isRead=false',
      `since=${minute(Math.floor(ROWS * 0.45))}&until=${minute(Math.floor(ROWS * 0.55))}&isRead=false`,
    ],
  ]
  // A write to the form moves its version: the next request counts its filter's total again.
  let flip = 0
  const change = () =>
    db
      .updateTable('submissions')
      .set({ notes: `note ${flip++}` })
      .where('id', '=', 'submission_bench00000000')
      .execute()
  // A different page size each time, so no request is answered from the response cache: each one
  // runs its page query, and its total comes from the pager's count (kept while the version holds).
  let size = 20
  const timed = async (query, suffix, before) => {
    const times = []
    let total = 0
    for (let i = 0; i < SAMPLES + 2; i++) {
      await before?.()
      const started = performance.now()
      const body = await get(`${query}${query ? '&' : ''}pageSize=${size}${suffix}`)
      if (i >= 2) times.push(performance.now() - started)
      total = body.meta.total
      size = size >= 100 ? 20 : size + 1
    }
    return { ms: median(times), total }
  }
  // Each request once before any is measured, so the first row does not pay for the JIT.
  for (const [, query] of windows) await get(`${query}${query ? '&' : ''}pageSize=19`)
  console.log(`\nMedian of ${SAMPLES} after 2 warm-ups, real HTTP, one request at a time, ms:`)
  console.log(
    `  ${'request'.padEnd(30)} ${'total'.padStart(8)} ${'page 1'.padStart(8)} ${'page 50'.padStart(8)} ${'after a write'.padStart(14)}`,
  )
  for (const [label, query] of windows) {
    const first = await timed(query, '')
    const deep = await timed(query, '&page=50')
    const written = await timed(query, '', change)
    console.log(
      `  ${label.padEnd(30)} ${String(first.total).padStart(8)} ${first.ms.toFixed(2).padStart(8)} ${deep.ms.toFixed(2).padStart(8)} ${written.ms.toFixed(2).padStart(14)}`,
    )
  }
} finally {
  await app?.close()
  await database.close()
  if (postgres) await postgresExec(baseUrl, `drop schema "${schema}" cascade`)
  rmSync(dir, { recursive: true, force: true })
}
