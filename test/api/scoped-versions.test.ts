import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import type { Database } from '../../src/db/tables.js'
import { createServices, type Services } from '../../src/services/index.js'
import { runCli } from '../cli/run-cli.js'
import { type Instance, type PairOnNewDatabase, startPairOnNewDatabase } from '../cluster/support.js'
import { buildForm, buildPage, buildRedirect, buildSubmission } from '../factories.js'

/**
 * Two real server processes on one database (a SQLite file, or a PostgreSQL schema with Redis),
 * asked over HTTP: a write moves the version of what it changes and nothing else, so every other
 * list keeps its cached page and entity tag, while the list it changes shows it on the very next
 * request on either instance.
 */
describe('versions per kind and per form', () => {
  let pair: PairOnNewDatabase
  let dir: string
  let url: string
  let database: DatabaseHandle
  let services: Services
  let a: Instance
  let b: Instance
  let key: string

  beforeAll(async () => {
    pair = await startPairOnNewDatabase(async (db) => {
      for (const id of ['form_a', 'form_b']) {
        await buildForm(db.db, { id })
        for (let i = 0; i < 3; i++) await buildSubmission(db.db, { formId: id })
      }
      await buildPage(db.db, { path: '/about' })
      await buildRedirect(db.db, { fromPath: '/old', toPath: '/new' })
    })
    ;({ a, b, database, key, dir, url } = pair)
    services = createServices(database)
  }, 60_000)

  afterAll(() => pair?.close())

  const ask = async (instance: Instance, path: string, tag?: string) => {
    const response = await fetch(`${instance.url}/api/v1${path}`, {
      headers: { authorization: `Bearer ${key}`, ...(tag ? { 'if-none-match': tag } : {}) },
    })
    return { status: response.status, tag: response.headers.get('etag') ?? '', body: await response.text() }
  }

  const LISTS = {
    forms: '/forms',
    pages: '/page-builder',
    redirects: '/page-builder/redirects',
    formA: '/forms/form_a/submissions',
    formB: '/forms/form_b/submissions',
  }
  type List = keyof typeof LISTS

  /** Each list's tag on both instances, after asking twice so that each instance keeps the page. */
  const tagsOf = async () => {
    const tags = new Map<string, string>()
    for (const instance of [a, b])
      for (const [name, path] of Object.entries(LISTS)) {
        await ask(instance, path)
        tags.set(`${instance.url} ${name}`, (await ask(instance, path)).tag)
      }
    return tags
  }

  /** After `write`, the lists in `changed` answer anew on both instances and every other list still answers 304. */
  async function expectOnlyChanged(
    write: () => Promise<void>,
    changed: List[],
    seen: (name: List, body: string) => void,
  ) {
    const before = await tagsOf()
    await write()
    for (const instance of [a, b])
      for (const [name, path] of Object.entries(LISTS) as [List, string][]) {
        const tag = before.get(`${instance.url} ${name}`) as string
        const answer = await ask(instance, path, tag)
        if (changed.includes(name)) {
          expect(answer.status, `${name} on ${instance.url}`).toBe(200)
          expect(answer.tag).not.toBe(tag)
          seen(name, answer.body)
        } else {
          expect(answer.status, `${name} on ${instance.url} (tag ${tag})`).toBe(304)
          expect(answer.tag).toBe(tag)
        }
      }
  }

  it('keeps every other list and its tag when a submission of one form is marked read, and shows the change on both instances', async () => {
    const [first] = (
      await services.inbox.listPage({ formId: 'form_a', filter: 'all', sort: 'newest', search: '' }, 1, 20)
    ).items
    await expectOnlyChanged(
      async () => {
        await services.inbox.applyBulk('form_a', [first?.id as string], 'read', 'cli')
      },
      ['formA'],
      (_name, body) => {
        const page = JSON.parse(body) as { data: { id: string; isRead: boolean }[] }
        expect(page.data.find((item) => item.id === first?.id)?.isRead).toBe(true)
      },
    )
  })

  it('keeps the submissions, forms and pages lists and their tags when a redirect changes by hand', async () => {
    await expectOnlyChanged(
      async () => {
        await sql`update redirects set to_path = ${'/newer'} where from_path = ${'/old'}`.execute(database.db)
      },
      ['redirects'],
      (_name, body) => expect(JSON.parse(body).data[0].toPath).toBe('/newer'),
    )
  })

  it('shows a submission added to one form, and its total, on the next request, leaving the other form alone', async () => {
    await expectOnlyChanged(
      async () => {
        await buildSubmission(database.db, { formId: 'form_b', data: { via: 'sql' } })
      },
      ['formB'],
      (_name, body) => {
        const page = JSON.parse(body) as { data: { data: unknown }[]; meta: { total: number } }
        expect(page.meta.total).toBe(4)
        expect(page.data[0]?.data).toEqual({ via: 'sql' })
      },
    )
  })

  it('moves only the forms list and the form itself when a form is deleted, and answers 404 for it at once', async () => {
    await buildForm(database.db, { id: 'form_gone' })
    await buildSubmission(database.db, { formId: 'form_gone' })
    for (const instance of [a, b])
      expect((await ask(instance, '/forms/form_gone/submissions')).status).toBe(200)
    await expectOnlyChanged(
      async () => {
        await database.db.deleteFrom('forms').where('id', '=', 'form_gone').execute()
      },
      ['forms'],
      () => {},
    )
    for (const instance of [a, b])
      expect((await ask(instance, '/forms/form_gone/submissions')).status).toBe(404)
    // Made again under the same id, it never answers with a tag it had before.
    await buildForm(database.db, { id: 'form_gone' })
    const again = await ask(a, '/forms/form_gone/submissions')
    expect(again.status).toBe(200)
    expect(JSON.parse(again.body).meta.total).toBe(0)
  })

  it('shows submissions imported by the CLI in another process on both instances, leaving pages and redirects alone', async () => {
    const file = join(dir, 'more.json')
    writeFileSync(file, JSON.stringify({ submissions: [{ formId: 'form_a', data: { via: 'cli' } }] }))
    await expectOnlyChanged(
      async () => {
        const imported = await runCli(['import', file], { databaseUrl: url })
        expect(imported.stderr).toBe('')
      },
      ['formA'],
      (_name, body) => expect(JSON.parse(body).meta.total).toBe(4),
    )
  })
  it("keeps every form's total and unread count equal to COUNT(*) through random concurrent writes from two handles and CLI imports", async () => {
    const forms = ['form_a', 'form_b', 'form_c']
    await buildForm(database.db, { id: 'form_c' })
    const second = openDatabase(url)
    let seed = 27
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    }
    const pick = <T>(items: readonly T[]): T => items[random(items.length)] as T
    const someId = async (db: Kysely<Database>, formId: string) =>
      (
        await db
          .selectFrom('submissions')
          .select('id')
          .where('form_id', '=', formId)
          .orderBy('id')
          .limit(1)
          .offset(random(5))
          .executeTakeFirst()
      )?.id ?? ''
    // Single statements only: on SQLite two handles of one process must not hold a transaction across a wait.
    const writes = async (db: Kysely<Database>, count: number) => {
      for (let i = 0; i < count; i++) {
        const formId = pick(forms)
        const operation = random(6)
        if (operation === 0) await buildSubmission(db, { formId, isRead: random(2) === 0 })
        else if (operation === 1) {
          await db
            .updateTable('submissions')
            .set({ is_read: random(2) === 0 ? 0 : 1 })
            .where('id', '=', await someId(db, formId))
            .execute()
        } else if (operation === 2) {
          // Many rows of one form in one statement, read ones and unread ones alike.
          await db
            .updateTable('submissions')
            .set({ is_read: sql<0 | 1>`1 - is_read` })
            .where('form_id', '=', formId)
            .where('id', '<', await someId(db, formId))
            .execute()
        } else if (operation === 3) {
          await db
            .deleteFrom('submissions')
            .where('id', '=', await someId(db, formId))
            .execute()
        } else if (operation === 4) {
          // A submission moved to another form leaves one count and joins another.
          await db
            .updateTable('submissions')
            .set({ form_id: pick(forms) })
            .where('id', '=', await someId(db, formId))
            .execute()
        } else {
          await db
            .updateTable('submissions')
            .set({ notes: `note ${i}` })
            .where('form_id', '=', formId)
            .execute()
        }
      }
    }
    const imports = async () => {
      for (let round = 0; round < 3; round++) {
        const file = join(dir, `concurrent-${round}.json`)
        const submissions = Array.from({ length: 30 }, (_, i) => ({
          formId: forms[i % forms.length],
          isRead: i % 3 === 0,
          data: { round, i },
        }))
        writeFileSync(file, JSON.stringify({ submissions }))
        expect((await runCli(['import', file], { databaseUrl: url })).stderr).toBe('')
      }
    }
    try {
      await Promise.all([writes(database.db, 150), writes(second.db, 150), imports()])
    } finally {
      await second.close()
    }
    for (const formId of forms) {
      const counted = await database.db
        .selectFrom('submissions')
        .select((eb) => [
          eb.fn.countAll<number | string>().as('total'),
          eb.fn.sum<number | string | null>(sql`case when is_read = 0 then 1 else 0 end`).as('unread'),
        ])
        .where('form_id', '=', formId)
        .executeTakeFirstOrThrow()
      const exact = { total: Number(counted.total), unread: Number(counted.unread ?? 0) }
      const kept = await database.db
        .selectFrom('form_submission_counts')
        .select(['total', 'unread'])
        .where('form_id', '=', formId)
        .executeTakeFirstOrThrow()
      expect({ total: Number(kept.total), unread: Number(kept.unread) }, formId).toEqual(exact)
      const listed = await services.lists.forms({
        search: '',
        filter: 'all',
        sort: 'newest',
        size: 100,
        page: 1,
      })
      expect(listed.items.find((item) => item.id === formId)).toMatchObject({
        submissionCount: exact.total,
        unreadCount: exact.unread,
      })
      for (const instance of [a, b]) {
        const page = JSON.parse((await ask(instance, `/forms/${formId}/submissions`)).body)
        expect(page.meta.total, `${formId} on ${instance.url}`).toBe(exact.total)
      }
    }
  }, 120_000)
})
