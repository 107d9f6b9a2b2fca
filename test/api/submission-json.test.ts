import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SubmissionsTable } from '../../src/db/tables.js'
import { presentSubmission, submissionJson } from '../../src/resources/submission.js'
import { listOf, SubmissionSchema } from '../../src/schemas.js'
import { buildForm } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'

/** Text as the ways in accept it: any well-formed Unicode except NUL, which every way in refuses. */
const text = (maxLength = 24) =>
  fc.string({ unit: 'binary', maxLength }).filter((value) => !value.includes('\u0000'))
const nullableText = () => fc.option(text(), { nil: null })
const timestamp = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
  .map((date) => `${date.toISOString().slice(0, 19)}Z`)
/** A `data` object as the importer stores it: `JSON.stringify` of what the record held. */
const data = fc
  .dictionary(text(12), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 })
  .map((object) => JSON.stringify(object))

const row = fc.record({
  id: text(),
  form_id: fc.constant('form_contact'),
  data,
  ip_address: nullableText(),
  user_agent: nullableText(),
  referrer: nullableText(),
  submitted_by: nullableText(),
  is_read: fc.constantFrom(0 as const, 1 as const),
  is_starred: fc.constantFrom(0 as const, 1 as const),
  notes: nullableText(),
  created_at: timestamp,
  updated_at: timestamp,
}) satisfies fc.Arbitrary<SubmissionsTable>

describe('submissions written as JSON text', () => {
  let app: FastifyInstance

  // The serializer the route used to write submissions with: compiled by Fastify from the schema.
  beforeAll(async () => {
    app = Fastify()
    app.post('/serialize', {
      schema: { response: { 200: listOf(SubmissionSchema) } },
      handler: async (request) => request.body,
    })
    await app.ready()
  })
  afterAll(() => app.close())

  const compiled = async (rows: SubmissionsTable[]) => {
    const meta = { total: rows.length, page: 1, pageSize: 100, totalPages: rows.length > 0 ? 1 : 0 }
    const response = await app.inject({
      method: 'POST',
      url: '/serialize',
      payload: { data: rows.map(presentSubmission), meta },
    })
    return { body: response.body, meta }
  }

  const spliced = (rows: SubmissionsTable[], meta: object) =>
    `{"data":[${rows.map(submissionJson).join(',')}],"meta":${JSON.stringify(meta)}}`

  it('writes every submission byte for byte as JSON.stringify writes the presented submission', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 5 }), (rows) => {
        const meta = { total: rows.length, page: 1, pageSize: 100, totalPages: 1 }
        expect(spliced(rows, meta)).toBe(JSON.stringify({ data: rows.map(presentSubmission), meta }))
      }),
      { numRuns: 300 },
    )
  })

  it('writes every submission byte for byte as the schema-compiled serializer does', async () => {
    // That serializer matches field names against `^(.*)$`, which no line terminator matches, and
    // leaves out a field named `__proto__` at any depth (JSON.stringify, like the splice, keeps it).
    const plainNames = row.filter(
      (r) =>
        !/[\n\r\u2028\u2029]/.test(Object.keys(JSON.parse(r.data)).join('')) &&
        !r.data.includes('"__proto__"'),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(plainNames, { maxLength: 5 }), async (rows) => {
        const { body, meta } = await compiled(rows)
        expect(spliced(rows, meta)).toBe(body)
      }),
      { numRuns: 200 },
    )
  })

  it('keeps a data field whose name holds a line break, which the compiled serializer dropped', async () => {
    const base = { ...fc.sample(row, 1)[0], data: JSON.stringify({ 'line\nbreak': 1, plain: 2 }) }
    expect(JSON.parse(submissionJson(base)).data).toEqual({ 'line\nbreak': 1, plain: 2 })
    expect(JSON.parse((await compiled([base])).body).data[0].data).toEqual({ plain: 2 })
  })

  it('writes stored data that is not in the stored form again, and refuses data that is not JSON', async () => {
    const base = fc.sample(row, 1)[0]
    expect(JSON.parse(submissionJson({ ...base, data: ' {"a": [1, 2]} ' })).data).toEqual({ a: [1, 2] })
    expect(JSON.parse(submissionJson({ ...base, data: '[1,2]' })).data).toEqual([1, 2])
    expect(() => submissionJson({ ...base, data: 'not json' })).toThrow(SyntaxError)
  })
})

describe("each submission's JSON kept by the database (its json column)", () => {
  let ctx: TestContext
  let formId: string
  beforeAll(async () => {
    ctx = await createTestContext()
    formId = (await buildForm(ctx.database.db, { title: 'Written by SQL' })).id
  })
  afterAll(() => ctx.close())

  /** Stores `rows` and reads back each one's `json` column, by id. */
  async function writtenByDatabase(rows: SubmissionsTable[]): Promise<Map<string, string>> {
    const db = ctx.database.db
    await db.deleteFrom('submissions').execute()
    if (rows.length > 0) await db.insertInto('submissions').values(rows).execute()
    const read = await db.selectFrom('submissions').select(['id', 'json']).execute()
    return new Map(read.map((row) => [row.id, row.json]))
  }

  it('writes every submission byte for byte as JSON.stringify writes the presented submission', async () => {
    const stored = fc.uniqueArray(row, { maxLength: 8, selector: (r) => r.id })
    await fc.assert(
      fc.asyncProperty(stored, async (rows) => {
        const written = await writtenByDatabase(rows.map((r) => ({ ...r, form_id: formId })))
        for (const r of rows)
          expect(written.get(r.id)).toBe(JSON.stringify(presentSubmission({ ...r, form_id: formId })))
      }),
      { numRuns: 150 },
    )
  })

  it('keeps the JSON current through every change to a row, whoever makes it', async () => {
    await fc.assert(
      fc.asyncProperty(row, row, async (before, after) => {
        const id = before.id
        await writtenByDatabase([{ ...before, form_id: formId }])
        const { id: _same, form_id: _form, ...changes } = after
        await ctx.database.db.updateTable('submissions').set(changes).where('id', '=', id).execute()
        const [read] = await ctx.database.db
          .selectFrom('submissions')
          .select('json')
          .where('id', '=', id)
          .execute()
        expect(read.json).toBe(JSON.stringify(presentSubmission({ ...after, id, form_id: formId })))
      }),
      { numRuns: 60 },
    )
  })

  it('refuses to have the JSON written by anyone but the database', async () => {
    const base = { ...fc.sample(row, 1)[0], id: 'sub_written', form_id: formId }
    await writtenByDatabase([base])
    const db = ctx.database.db as unknown as Kysely<{ submissions: { id: string; json: string } }>
    await expect(
      db.updateTable('submissions').set({ json: '{"id":"forged"}' }).where('id', '=', base.id).execute(),
    ).rejects.toThrow()
    const [read] = await db.selectFrom('submissions').select('json').where('id', '=', base.id).execute()
    expect(read.json).toBe(JSON.stringify(presentSubmission(base)))
  })

  it('writes every control character, quote and backslash escaped as JSON.stringify does', async () => {
    const every = Array.from({ length: 0x80 }, (_, code) => String.fromCharCode(code))
      .join('')
      .slice(1)
    const base = { ...fc.sample(row, 1)[0], id: 'sub_every', form_id: formId }
    const notes = `${every}\u2028\u2029 ü ✓ 😀 \\ "quoted"`
    const written = await writtenByDatabase([{ ...base, notes, data: JSON.stringify({ [every]: every }) }])
    expect(written.get('sub_every')).toBe(
      JSON.stringify(presentSubmission({ ...base, notes, data: JSON.stringify({ [every]: every }) })),
    )
  })

  it('writes stored data that is not in the stored form again, and fails on data that is not JSON', async () => {
    const base = { ...fc.sample(row, 1)[0], id: 'sub_odd', form_id: formId }
    for (const [stored, parsed] of [
      [' {"a": [1, 2]} ', { a: [1, 2] }],
      ['[1,2]', [1, 2]],
    ] as const) {
      const written = await writtenByDatabase([{ ...base, data: stored }])
      expect(JSON.parse(written.get('sub_odd') as string).data).toEqual(parsed)
    }
    await expect(writtenByDatabase([{ ...base, data: 'not json' }])).rejects.toThrow()
  })
})
