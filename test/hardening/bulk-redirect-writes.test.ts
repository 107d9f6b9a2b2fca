import { type Kysely, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ANALYZE_AFTER_ROWS, withCheckpointInWorker } from '../../src/db/bulk-writes.js'
import type { Database } from '../../src/db/tables.js'
import type { RedirectService } from '../../src/services/redirects/index.js'
import { createRedirectService } from '../../src/services/redirects/index.js'
import { TEST_DIALECT } from '../harness.js'
import { openImportDatabase } from '../import/support.js'

/** Rows in each file: many statements' worth, so that a failure lands half way through. */
const ROWS = 1500

let db: Kysely<Database>
let redirects: RedirectService
let close: () => Promise<void>

beforeEach(async () => {
  const opened = await openImportDatabase('lectern-bulk-redirects-')
  db = opened.db
  redirects = createRedirectService(db)
  close = () => opened.close()
})

afterEach(() => close())

const chainCsv = (prefix: string, links: number) =>
  `fromPath,toPath\n${Array.from({ length: links }, (_, i) => `/${prefix}${i},/${prefix}${i + 1}`).join('\n')}\n`

/** Makes the database itself refuse a write to the redirect from `path`, late in a bulk write. */
async function refuseWritesTo(path: string, operation: 'insert' | 'update') {
  if (TEST_DIALECT === 'sqlite') {
    await sql`CREATE TRIGGER refuse_path BEFORE ${sql.raw(operation.toUpperCase())} ON redirects
      WHEN NEW.from_path = ${sql.lit(path)} BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END`.execute(db)
  } else {
    await sql`CREATE FUNCTION refuse_path() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.from_path = ${sql.lit(path)} THEN RAISE EXCEPTION 'refused by trigger'; END IF; RETURN NEW; END $$`.execute(
      db,
    )
    await sql`CREATE TRIGGER refuse_path BEFORE ${sql.raw(operation.toUpperCase())} ON redirects
      FOR EACH ROW EXECUTE FUNCTION refuse_path()`.execute(db)
  }
}

const everything = async () => ({
  redirects: await db.selectFrom('redirects').select(['from_path', 'to_path']).orderBy('from_path').execute(),
  audit: await db.selectFrom('audit_log').select('action').execute(),
})

describe('bulk writes of redirects, written in slices that take turns with the event loop', () => {
  it('write nothing when the database refuses a row of a CSV import half way through', async () => {
    await redirects.importCsv(chainCsv('kept', 3))
    const before = await everything()
    await refuseWritesTo(`/new${ROWS - 200}`, 'insert')
    await expect(redirects.importCsv(chainCsv('new', ROWS))).rejects.toThrow('refused by trigger')
    expect(await everything()).toEqual(before)
  })

  it('change nothing when the database refuses a row of a flattening half way through', async () => {
    await redirects.importCsv(chainCsv('m', ROWS))
    const before = await everything()
    await refuseWritesTo(`/m${ROWS - 200}`, 'update')
    await expect(redirects.flattenChains()).rejects.toThrow('refused by trigger')
    expect(await everything()).toEqual(before)
  })

  it('flatten a long chain completely, each link pointing at its end', async () => {
    await redirects.importCsv(chainCsv('m', ROWS))
    expect(await redirects.flattenChains()).toEqual({ changed: ROWS - 1, madeTemporary: 0 })
    const targets = await db.selectFrom('redirects').select('to_path').distinct().execute()
    expect(targets).toEqual([{ to_path: `/m${ROWS}` }])
  })
})

describe.runIf(TEST_DIALECT === 'sqlite')("SQLite's checkpoint after a bulk write", () => {
  const autocheckpoint = async () =>
    Number(
      (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows[0]
        ?.wal_autocheckpoint,
    )

  it('is held back while the write runs and comes back after it, even when the write fails', async () => {
    const during: number[] = []
    await withCheckpointInWorker(db, async () => {
      during.push(await autocheckpoint())
    })
    await expect(
      withCheckpointInWorker(db, async () => {
        during.push(await autocheckpoint())
        throw new Error('the write failed')
      }),
    ).rejects.toThrow('the write failed')
    expect(during).toEqual([0, 0])
    expect(await autocheckpoint()).toBe(1000)
  })

  it('comes back only when the last of two overlapping bulk writes ends', async () => {
    let release: () => void = () => {}
    const first = withCheckpointInWorker(db, () => new Promise<void>((resolve) => (release = resolve)))
    const afterSecond = await withCheckpointInWorker(db, async () => {}).then(autocheckpoint)
    release()
    await first
    expect([afterSecond, await autocheckpoint()]).toEqual([0, 1000])
  })

  it('leaves the WAL copied into the database file by the worker', async () => {
    await redirects.importCsv(chainCsv('w', ROWS))
    // Every frame of the WAL is already in the database file: a checkpoint now finds nothing to copy.
    const [result] = (
      await sql<{ busy: number; log: number; checkpointed: number }>`pragma wal_checkpoint(PASSIVE)`.execute(
        db,
      )
    ).rows
    expect(result?.log).toBe(result?.checkpointed)
    expect(await autocheckpoint()).toBe(1000)
  })
})

describe.runIf(TEST_DIALECT === 'postgres')("PostgreSQL's statistics after a bulk write", () => {
  /** What the planner believes the table holds: `ANALYZE` sets it, in the same transaction. */
  const plannedRows = async () =>
    Number(
      (
        await sql<{ reltuples: number }>`select reltuples from pg_class
          where oid = to_regclass(current_schema() || '.redirects')`.execute(db)
      ).rows[0]?.reltuples,
    )

  it('are refreshed after a CSV import of many redirects, not after a small one', async () => {
    await redirects.importCsv(chainCsv('few', 3))
    const afterSmall = await plannedRows()
    await redirects.importCsv(chainCsv('many', ANALYZE_AFTER_ROWS))
    expect(afterSmall).toBeLessThan(3)
    expect(await plannedRows()).toBe(ANALYZE_AFTER_ROWS + 3)
  })
})
