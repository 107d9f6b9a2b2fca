// What counting API key usage costs: `count()` per request (it runs on the API's hot path) and one
// flush of a minute's counts into key_usage_hourly on a temporary SQLite database, or on the
// database DATABASE_URL names. Run `npm run build` first: this measures dist/.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../dist/db/database.js'
import { migrateToLatest } from '../dist/db/migrate.js'
import { createUsageService } from '../dist/services/usage.js'

const dir = mkdtempSync(join(tmpdir(), 'lectern-usage-'))
const database = openDatabase(process.env.DATABASE_URL ?? `sqlite:${join(dir, 'usage.db')}`)
try {
  await migrateToLatest(database)
  const db = database.db
  const stamp = '2024-01-01T00:00:00Z'
  const owner = `user_bench_${Date.now()}`
  await db
    .insertInto('users')
    .values({
      id: owner,
      email: `${owner}@example.com`,
      password_hash: 'x',
      role: 'viewer',
      is_disabled: 0,
      created_at: stamp,
      updated_at: stamp,
    })
    .execute()
  const ids = Array.from({ length: 1000 }, (_, i) => `${owner}_key_${i}`)
  await db
    .insertInto('api_keys')
    .values(
      ids.map((id) => ({
        id,
        name: id,
        prefix: 'lk_live_bnch',
        key_hash: id,
        created_by: owner,
        is_active: 1,
        created_at: stamp,
      })),
    )
    .execute()

  const usage = createUsageService(db)
  const calls = 5_000_000
  for (let i = 0; i < 200_000; i++) usage.count(ids[i % 100], i % 50 === 0)
  const started = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) usage.count(ids[i % 100], i % 50 === 0)
  const perCall = Number(process.hrtime.bigint() - started) / calls
  console.log(
    `count(): ${perCall.toFixed(0)} ns per request (${calls.toLocaleString('en')} calls over 100 keys)`,
  )
  await usage.flush()

  for (const keys of [10, 100, 1000]) {
    for (let i = 0; i < 100_000; i++) usage.count(ids[i % keys], false)
    const t0 = performance.now()
    await usage.flush()
    console.log(
      `${database.dialect}: one flush of 100,000 requests over ${keys} keys: ${(performance.now() - t0).toFixed(1)} ms`,
    )
  }
  await db.deleteFrom('api_keys').where('created_by', '=', owner).execute()
  await db.deleteFrom('users').where('id', '=', owner).execute()
} finally {
  await database.close()
  rmSync(dir, { recursive: true, force: true })
}
