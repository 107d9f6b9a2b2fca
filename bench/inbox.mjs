// What the dashboard's submission inbox costs on one form with 100,000 submissions: the time to
// render a page of each kind of view (over real HTTP, signed in), and the rate of a streamed export
// of the whole form as CSV and JSON; and the redirects list's views over 100,000 redirects (BENCH_REDIRECTS). On a temporary SQLite file, or with BENCH_POSTGRES=1 on
// PostgreSQL (TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test) in a schema of its
// own, dropped at the end. BENCH_ROWS changes the row count. Run `npm run build` first: this measures dist/.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { buildApp } from '../dist/app.js'
import { openDatabase } from '../dist/db/database.js'
import { migrateToLatest } from '../dist/db/migrate.js'
import { MemoryRateLimiter } from '../dist/ratelimit/memory.js'
import { createServices } from '../dist/services/index.js'
import { hashPassword } from '../dist/services/passwords.js'
import { postgresExec, withSchema } from './lib/postgres.mjs'
import { median } from './lib/stats.mjs'

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000)
const postgres = process.env.BENCH_POSTGRES === '1'
const baseUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `bench_inbox_${process.pid}`
const dir = mkdtempSync(join(tmpdir(), 'lectern-inbox-'))
if (postgres) await postgresExec(baseUrl, `create schema "${schema}"`)
const database = openDatabase(postgres ? withSchema(baseUrl, schema) : `sqlite:${join(dir, 'inbox.db')}`)
let app
try {
  await migrateToLatest(database)
  const db = database.db
  const stamp = '2024-01-01T00:00:00Z'
  const password = 'benchmark password 1234'
  await db
    .insertInto('users')
    .values({
      id: 'user_bench',
      email: 'bench@example.com',
      password_hash: await hashPassword(password),
      role: 'global_admin',
      is_disabled: 0,
      created_at: stamp,
      updated_at: stamp,
    })
    .execute()
  const formId = 'form_benchinbox0000000'
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

  const t0 = performance.now()
  const base = Date.parse('2020-01-01T00:00:00Z')
  for (let start = 0; start < ROWS; start += 1000) {
    const rows = []
    for (let i = start; i < Math.min(ROWS, start + 1000); i++) {
      const at = new Date(base + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z')
      rows.push({
        id: `submission_bench${String(i).padStart(8, '0')}`,
        form_id: formId,
        data: JSON.stringify({
          name: `Person ${i}`,
          email: `person${i}@example.com`,
          message: `Hello, this is message number ${i} about order ${(i * 7919) % 100_000}. Please call back.`,
        }),
        ip_address: '203.0.113.7',
        user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
        referrer: 'https://example.com/contact',
        submitted_by: null,
        is_read: i % 10 < 7 ? 1 : 0,
        is_starred: i % 20 === 0 ? 1 : 0,
        notes: i % 50 === 0 ? 'Followed up by phone' : null,
        created_at: at,
        updated_at: at,
      })
    }
    await db.insertInto('submissions').values(rows).execute()
  }
  // The redirects list: 100,000 redirects, as a large site that moved once has.
  const redirectRows = Number(process.env.BENCH_REDIRECTS ?? 100_000)
  for (let start = 0; start < redirectRows; start += 1000) {
    const rows = []
    for (let i = start; i < Math.min(redirectRows, start + 1000); i++) {
      const at = new Date(base + i * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')
      rows.push({
        id: `redirect_bench${String(i).padStart(8, '0')}`,
        from_path: `/old/${(i * 7919) % redirectRows}/page-${i}`,
        to_path: `/new/${i % 997}`,
        type: i % 5 === 0 ? 'temporary' : 'permanent',
        is_active: i % 10 === 0 ? 0 : 1,
        created_at: at,
        updated_at: at,
      })
    }
    await db.insertInto('redirects').values(rows).execute()
  }
  // Statistics as a running database has them (autovacuum's analyze, or SQLite's `analyze`): the
  // planner needs them to walk the index rather than sort a fresh table.
  await sql`analyze`.execute(db)
  console.log(
    `${postgres ? 'PostgreSQL' : 'SQLite'}: ${ROWS.toLocaleString('en')} submissions written in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )

  app = await buildApp({
    config: { ERROR_STYLE: 'code', LOG_LEVEL: 'warn' },
    services: createServices(database),
    limiter: new MemoryRateLimiter({ perHour: 1_000_000_000, perSecond: 1_000_000_000 }),
    database,
  })
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })

  // Sign in as a browser does: the form's cookie and token, then the session cookie.
  const cookies = new Map()
  const keep = (res) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const [name, value] = pair.split('=')
      cookies.set(name, value)
    }
  }
  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  const login = await fetch(`${origin}/admin/login`)
  keep(login)
  const token = /name="_csrf" value="([^"]*)"/.exec(await login.text())[1]
  const signIn = await fetch(`${origin}/admin/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader() },
    body: new URLSearchParams({ _csrf: token, email: 'bench@example.com', password }).toString(),
  })
  keep(signIn)
  if (signIn.status !== 303) throw new Error(`sign-in answered ${signIn.status}`)

  const get = async (path) => {
    const res = await fetch(`${origin}${path}`, { headers: { cookie: cookieHeader() }, redirect: 'manual' })
    const body = await res.text()
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`)
    return body
  }
  const inbox = `/admin/forms/${formId}/submissions`
  const lastPage = Math.ceil(ROWS / 100)
  const views = [
    ['cards, newest, page 1 (20)', `${inbox}`],
    ['table, newest, page 1 (100)', `${inbox}?view=table&size=100`],
    ['table, oldest, page 1 (100)', `${inbox}?view=table&sort=oldest&size=100`],
    [`table, last page (${lastPage}, 100)`, `${inbox}?view=table&size=100&page=${lastPage}`],
    ['table, unread, page 1', `${inbox}?view=table&filter=unread`],
    ['table, starred, page 1', `${inbox}?view=table&filter=starred`],
    ['table, search "order 4242" (rare)', `${inbox}?view=table&q=${encodeURIComponent('order 4242.')}`],
    ['table, search "PERSON1" (common)', `${inbox}?view=table&q=PERSON1`],
    ['table, unread + search "call back"', `${inbox}?view=table&filter=unread&q=call+back`],
    ['forms list (unread counts)', '/admin/forms'],
    [`redirects (${redirectRows.toLocaleString('en')}), page 1`, '/admin/redirects'],
    ['redirects, last page (100)', `/admin/redirects?size=100&page=${Math.ceil(redirectRows / 100)}`],
    [
      'redirects, by to path, middle page (100)',
      `/admin/redirects?sort=to&size=100&page=${Math.ceil(redirectRows / 200)}`,
    ],
    ['redirects, inactive, newest first', '/admin/redirects?filter=inactive&sort=newest'],
    ['redirects, search "page-4242"', '/admin/redirects?q=page-4242'],
    ['overview (unread total)', '/admin'],
  ]
  // A change to any content moves the content version, and with it every kept count: the first
  // page after it counts again. Marking one submission read or unread is such a change.
  let flip = 0
  const change = () =>
    db
      .updateTable('submissions')
      .set({ is_read: flip++ % 2 })
      .where('id', '=', 'submission_bench00000000')
      .execute()
  const afterChange = [
    ['table, page 1, after a change (recount)', `${inbox}?view=table&size=100`],
    ['table, unread, after a change (recount)', `${inbox}?view=table&filter=unread`],
    ['forms list, after a change (recount)', '/admin/forms'],
    ['overview, after a change (recount)', '/admin'],
  ]
  const timed = async (label, path, before) => {
    for (let i = 0; i < 2; i++) {
      await before?.()
      await get(path)
    }
    const times = []
    for (let i = 0; i < 7; i++) {
      await before?.()
      const started = performance.now()
      await get(path)
      times.push(performance.now() - started)
    }
    console.log(`  ${label.padEnd(40)} ${median(times).toFixed(1).padStart(7)} ms`)
  }
  console.log('\nPage times (median of 7 after 2 warm-ups, real HTTP, one request at a time):')
  for (const [label, path] of views) await timed(label, path)
  for (const [label, path] of afterChange) await timed(label, path, change)

  console.log('\nExports of the whole form (streamed, read to the end by the client):')
  for (const [label, query] of [
    ['CSV, all', 'format=csv'],
    ['JSON, all', 'format=json'],
    ['CSV, search "call back" (all)', 'format=csv&q=call+back'],
    ['CSV, search "order 4242." (1)', `format=csv&q=${encodeURIComponent('order 4242.')}`],
  ]) {
    const memoryBefore = process.memoryUsage().rss
    let peak = memoryBefore
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 20)
    const started = performance.now()
    const res = await fetch(`${origin}${inbox}/export?${query}`, { headers: { cookie: cookieHeader() } })
    let bytes = 0
    let lines = 0
    for await (const chunk of res.body) {
      bytes += chunk.length
      for (const byte of chunk) if (byte === 10) lines++
    }
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    console.log(
      `  ${label.padEnd(30)} ${(bytes / 1e6).toFixed(1).padStart(6)} MB, ${lines.toLocaleString('en').padStart(8)} lines in ${seconds.toFixed(2)} s: ${Math.round(ROWS / seconds).toLocaleString('en')} rows/s of the form, RSS +${((peak - memoryBefore) / 1e6).toFixed(0)} MB at most`,
    )
  }
} finally {
  await app?.close()
  await database.close()
  if (postgres) await postgresExec(baseUrl, `drop schema "${schema}" cascade`)
  rmSync(dir, { recursive: true, force: true })
}
