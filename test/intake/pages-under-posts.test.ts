import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/database.js'
import { createServices } from '../../src/services/index.js'
import { type Instance, type PairOnNewDatabase, startPairOnNewDatabase } from '../cluster/support.js'
import { buildForm, buildSubmission } from '../factories.js'
import { postJson, send } from './support.js'

/**
 * The first pages of a form taking posts never miss a write, whichever instance or connection made
 * it and whatever ran at the same time: two real server processes on one database (a SQLite file,
 * or PostgreSQL with Redis), posts to both while pages are asked for on both, inbox changes,
 * deletes and imports from a third connection; after each step every page is checked byte for byte
 * against the database's own rows, and its total against COUNT(*).
 */
describe('pages of a form taking posts', () => {
  let pair: PairOnNewDatabase
  let database: DatabaseHandle
  let a: Instance
  let b: Instance
  let key: string
  let form: string

  beforeAll(async () => {
    pair = await startPairOnNewDatabase(
      async (db) => {
        form = (await buildForm(db.db, {})).id
        await createServices(db).intake.updateSettings(form, { enabled: true })
        for (let i = 0; i < 30; i++)
          await buildSubmission(db.db, { formId: form, data: { message: `imported ${i}` } })
      },
      { INTAKE_RATE_LIMIT_PER_MINUTE: '100000' },
    )
    ;({ a, b, database, key } = pair)
  }, 60_000)

  afterAll(() => pair?.close())

  let posted = 0
  const post = async (instance: Instance) => {
    const answer = await postJson(
      instance.url,
      form,
      { message: `posted ${posted++}` },
      { accept: 'application/json' },
    )
    expect(answer.status).toBe(201)
  }
  const page = async (instance: Instance, size: number, number = 1) => {
    const answer = await send(
      instance.url,
      'GET',
      `/api/v1/forms/${form}/submissions?page=${number}&pageSize=${size}`,
      {
        authorization: `Bearer ${key}`,
      },
    )
    expect(answer.status).toBe(200)
    return answer.body
  }

  /** The page as the database has it now: its rows' own JSON, newest first, and its total. */
  const expected = async (size: number, number: number) => {
    const rows = await database.db
      .selectFrom('submissions')
      .select(sql.ref<string>('json').as('json'))
      .where('form_id', '=', form)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(size)
      .offset((number - 1) * size)
      .execute()
    const total = await database.db
      .selectFrom('submissions')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('form_id', '=', form)
      .executeTakeFirstOrThrow()
    const json = rows.map((row) => row.json).join(',')
    return { data: `{"data":[${json}],`, total: Number(total.count) }
  }

  /** Page `number` at `size` on `instance` is exactly the database's. */
  const holds = async (instance: Instance, size: number, number = 1) => {
    const body = await page(instance, size, number)
    const truth = await expected(size, number)
    expect(body.slice(0, truth.data.length)).toBe(truth.data)
    expect((JSON.parse(body) as { meta: { total: number } }).meta.total).toBe(truth.total)
  }

  it('shows every write on the next request, on both instances, whatever ran at the same time', async () => {
    // A fixed sequence of random steps, so a failure can be run again as it was.
    let seed = 20261128
    const random = (n: number) => {
      // xorshift32
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return (seed >>> 0) % n
    }
    const newest = () =>
      database.db
        .selectFrom('submissions')
        .select('id')
        .where('form_id', '=', form)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(3)
        .execute()
    for (let step = 0; step < 40; step++) {
      const action = random(6)
      if (action === 0) await Promise.all(Array.from({ length: 1 + random(4) }, () => post(a)))
      else if (action === 1) await Promise.all(Array.from({ length: 1 + random(3) }, () => post(b)))
      else if (action === 2)
        // Posts to both instances while page 1 is asked for on each, so that pages are built and
        // kept while inserts are in flight.
        await Promise.all([
          ...Array.from({ length: 2 + random(4) }, () => post(a)),
          post(b),
          ...Array.from({ length: 3 }, (_, i) => page(i % 2 === 0 ? a : b, 20)),
        ])
      else if (action === 3) {
        const rows = await newest()
        await database.db
          .updateTable('submissions')
          .set({ is_read: 1 })
          .where('id', '=', rows[random(rows.length)]?.id ?? '')
          .execute()
      } else if (action === 4) {
        const rows = await newest()
        await database.db
          .deleteFrom('submissions')
          .where('id', '=', rows[random(rows.length)]?.id ?? '')
          .execute()
      } else {
        // Imported with a time in the future: it goes first, ahead of every post.
        await buildSubmission(database.db, { formId: form, createdAt: `2099-01-0${1 + random(9)}T00:00:00Z` })
        await post(a)
      }
      for (const size of [1, 7, 20]) await holds(a, size)
      await holds(a, 7, 3)
      await holds(b, 20)
    }
  }, 60_000)
})
