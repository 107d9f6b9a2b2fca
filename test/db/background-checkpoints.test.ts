import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.js'
import { PAGE_SIZE } from '../../src/db/dialects/sqlite.js'
import {
  BACKSTOP_AUTOCHECKPOINT_PAGES,
  startBackgroundCheckpoints,
  WAL_WATCH_MS,
} from '../../src/db/dialects/sqlite-checkpoints.js'
import { openSqliteConnection } from '../../src/db/dialects/sqlite-driver.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { buildForm, buildSubmission } from '../factories.js'
import { TEST_DIALECT } from '../harness.js'

const dir = mkdtempSync(join(tmpdir(), 'lectern-checkpoints-'))
const DATABASE_MODULE = new URL('../../dist/db/database.js', import.meta.url).href
const MIGRATE_MODULE = new URL('../../dist/db/migrate.js', import.meta.url).href
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * How many submissions the database file `file` holds by itself, without its WAL: what checkpoints
 * have copied back into it (-1 while not even its tables are, -2 for a copy taken while a
 * checkpoint was writing the file). Read from a copy, so the live file's WAL is left alone.
 */
function submissionsInFile(file: string): number {
  const copy = join(dir, `copy-${Math.random().toString(36).slice(2)}.db`)
  copyFileSync(file, copy)
  const sqlite = openSqliteConnection(copy)
  try {
    const [table] = sqlite.prepare("select 1 from sqlite_master where name = 'submissions'").all([])
    if (table === undefined) return -1
    const [row] = sqlite.prepare('select count(*) as count from submissions').all([]) as { count: number }[]
    return Number(row?.count)
  } catch (error) {
    // A plain copy of a file a checkpoint is writing can hold some of its pages from before and some
    // from after (SQLite's own readers take a lock; a file copy cannot): such a torn copy says
    // nothing of the live file, so the caller reads again.
    if (error instanceof Error && /malformed|not a database/.test(error.message)) return -2
    throw error
  } finally {
    sqlite.close()
    rmSync(copy, { force: true })
  }
}

/** How many submissions `database` holds, WAL included. */
async function countSubmissions(database: ReturnType<typeof openDatabase>): Promise<number> {
  const { count } = await database.db
    .selectFrom('submissions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow()
  return Number(count)
}

/** Polls `read` until it returns `expected` or `ms` pass; returns the last value read. */
async function eventually<T>(read: () => T, expected: T, ms: number): Promise<T> {
  const until = Date.now() + ms
  let value = read()
  while (value !== expected && Date.now() < until) {
    await sleep(100)
    value = read()
  }
  return value
}

// A property of SQLite files alone: run once, in the SQLite pass of the suite.
describe.runIf(TEST_DIALECT === 'sqlite')('background checkpoints', () => {
  it("copies a serving connection's commits into the database file from a worker, not in the commits", async () => {
    const file = join(dir, 'serving.db')
    const database = openDatabase(`sqlite:${file}`, { backgroundCheckpoints: true })
    try {
      await migrateToLatest(database)
      const autocheckpoint = async () => {
        const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(
          database.db,
        )
        return Number(rows[0]?.wal_autocheckpoint)
      }
      // A lone write starts no thread: the commits keep SQLite's own checkpoints.
      const form = await buildForm(database.db)
      await sleep(WAL_WATCH_MS * 2.5)
      expect(await autocheckpoint()).toBe(1000)
      // Writes for a few seconds in a row are a stream: the worker starts, and from then on the
      // commits' own checkpoints are only a backstop.
      for (let i = 0; i < 12; i++) {
        await buildSubmission(database.db, { formId: form.id })
        await sleep(WAL_WATCH_MS / 4)
      }
      expect(await autocheckpoint()).toBe(BACKSTOP_AUTOCHECKPOINT_PAGES)
      for (let i = 0; i < 20; i++) await buildSubmission(database.db, { formId: form.id })
      // Far below the backstop, no commit checkpointed: only the worker can bring the rows across.
      expect(await eventually(() => submissionsInFile(file), 32, 5_000)).toBe(32)
    } finally {
      await database.close()
    }
  })

  it('starts the WAL over under a steady stream of commits, instead of letting it grow to the backstop', async () => {
    const file = join(dir, 'steady.db')
    const database = openDatabase(`sqlite:${file}`, { backgroundCheckpoints: true })
    try {
      await migrateToLatest(database)
      const form = await buildForm(database.db)
      // 2,000 lone commits over about four seconds, some 14,000 pages of WAL in all: more than the
      // backstop, which a WAL that never starts over reaches (its file keeps that size).
      for (let burst = 0; burst < 400; burst++) {
        for (let i = 0; i < 5; i++) await buildSubmission(database.db, { formId: form.id })
        await sleep(10)
      }
      const walPages = statSync(`${file}-wal`).size / PAGE_SIZE
      expect(walPages).toBeLessThan(BACKSTOP_AUTOCHECKPOINT_PAGES / 2)
    } finally {
      await database.close()
    }
  })

  it('runs no thread for reads and lone writes, starts on a stream of writes, and stops once it ends', async () => {
    const file = join(dir, 'idle.db')
    const setup = openDatabase(`sqlite:${file}`)
    await migrateToLatest(setup)
    const form = await buildForm(setup.db)
    const changes: string[] = []
    const checkpoints = startBackgroundCheckpoints(file, {
      onStart: () => changes.push('start'),
      onStop: () => changes.push('stop'),
      watchMs: 100,
      idleMs: 1_000,
    })
    try {
      /** Another connection (a CLI, another instance) writes a row every 30 ms for `ms`. */
      const stream = async (ms: number) => {
        for (const end = Date.now() + ms; Date.now() < end; ) {
          await buildSubmission(setup.db, { formId: form.id })
          await sleep(30)
        }
      }
      // Reads only, then a lone write: no thread.
      await setup.db.selectFrom('forms').selectAll().execute()
      await sleep(400)
      await buildSubmission(setup.db, { formId: form.id })
      await sleep(400)
      expect([checkpoints.running, changes]).toEqual([false, []])
      // A stream of writes: the thread starts and copies them.
      await stream(600)
      expect(checkpoints.running).toBe(true)
      const written = await countSubmissions(setup)
      expect(await eventually(() => submissionsInFile(file), written, 3_000)).toBe(written)
      // A second without a stream, and the thread is gone: the connection checkpoints by itself.
      expect(await eventually(() => checkpoints.running, false, 4_000)).toBe(false)
      // `running` turns false as the stop begins; `onStop` follows once the thread has exited.
      expect(await eventually(() => changes.join(' '), 'start stop', 2_000)).toBe('start stop')
      // Another stream: it starts again.
      await stream(600)
      expect(checkpoints.running).toBe(true)
      expect(changes).toEqual(['start', 'stop', 'start'])
    } finally {
      await checkpoints.stop()
      await setup.close()
    }
    expect(checkpoints.running).toBe(false)
  })

  it('stops when the database closes: later commits stay in the WAL', async () => {
    const file = join(dir, 'closed.db')
    const database = openDatabase(`sqlite:${file}`, { backgroundCheckpoints: true })
    await migrateToLatest(database)
    const form = await buildForm(database.db)
    await database.close()
    const plain = openDatabase(`sqlite:${file}`)
    try {
      // The plain connection's own checkpoints wait for a thousand pages, which one row never fills.
      await buildSubmission(plain.db, { formId: form.id })
      await sleep(2_500)
      expect(submissionsInFile(file)).toBe(0)
    } finally {
      await plain.close()
    }
  })

  it('holds the process until its last checkpoint when closed, though idle it holds nothing', async () => {
    const file = join(dir, 'alone.db')
    // A process with nothing else to wait for: `close()` must still resolve, not leave it to exit
    // under a pending await. The built module is what `lectern serve` runs.
    const script = `
      const { openDatabase } = await import(${JSON.stringify(DATABASE_MODULE)})
      const { migrateToLatest } = await import(${JSON.stringify(MIGRATE_MODULE)})
      const database = openDatabase(${JSON.stringify(`sqlite:${file}`)}, { backgroundCheckpoints: true })
      await migrateToLatest(database)
      // Writes for a few watches in a row start the thread, which close() must then wait for.
      await database.db.schema.createTable('written_later').addColumn('id', 'integer').execute()
      for (let i = 0; i < 16; i++) {
        await database.db.insertInto('written_later').values({ id: i }).execute()
        await new Promise((resolve) => setTimeout(resolve, ${WAL_WATCH_MS / 4}))
      }
      await database.close()
      console.log('closed')`
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
    expect({ code: result.status, stdout: result.stdout.trim() }).toEqual({ code: 0, stdout: 'closed' })
    expect(submissionsInFile(file)).toBe(0)

    // Left open, the thread alone does not keep a process alive that has nothing else to do.
    const left = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { openDatabase } = await import(${JSON.stringify(DATABASE_MODULE)})
        openDatabase(${JSON.stringify(`sqlite:${file}`)}, { backgroundCheckpoints: true })
        console.log('left open')`,
      ],
      { encoding: 'utf8', timeout: 15_000 },
    )
    expect({ code: left.status, stdout: left.stdout.trim() }).toEqual({ code: 0, stdout: 'left open' })
  })

  it('is not started for an in-memory database, which has no WAL', async () => {
    const database = openDatabase('sqlite::memory:', { backgroundCheckpoints: true })
    try {
      const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(
        database.db,
      )
      expect(Number(rows[0]?.wal_autocheckpoint)).toBe(1000)
    } finally {
      await database.close()
    }
  })
})
