import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/tables.js'
import { BULK_SUBMISSIONS } from '../../src/services/import/batches.js'
import type { Importer } from '../../src/services/import/index.js'
import { now } from '../../src/time.js'
import { buildForm, buildPage, buildRedirect, buildSubmission } from '../factories.js'
import { TEST_DIALECT } from '../harness.js'
import {
  contentSnapshot,
  type ImportDatabase,
  openImportDatabase,
  refusal,
  refuseSubmissionsNotedExplode,
} from './support.js'

let dir: string
let db: Kysely<Database>
let importer: Importer

let opened: ImportDatabase

beforeEach(async () => {
  opened = await openImportDatabase('lectern-import-ndjson-')
  ;({ dir, db, importer } = opened)
})

afterEach(() => opened.close())

/** An NDJSON file from records (serialized) and raw strings (written as they are). */
function ndjsonFile(lines: readonly (string | object)[], name = 'import.ndjson', eol = '\n'): string {
  const path = join(dir, name)
  writeFileSync(path, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join(eol))
  return path
}

async function seedDatabase() {
  await buildForm(db, { id: 'form_seed', title: 'Seed' })
  for (let i = 0; i < 5; i++) await buildSubmission(db, { formId: 'form_seed', id: `submission_seed_${i}` })
  await buildPage(db, { id: 'page_seed', path: '/seed' })
  await buildRedirect(db, { id: 'redirect_seed', fromPath: '/seed-old', toPath: '/seed' })
}

describe('importing an NDJSON file', () => {
  it('imports one record per line, applying the defaults and skipping blank lines', async () => {
    const result = await importer.importFile(
      ndjsonFile([
        { kind: 'form', id: 'form_contact', title: 'Contact', description: 'Write to us' },
        '',
        { kind: 'submission', formId: 'form_contact', data: { message: 'Hello' }, isStarred: true },
        '   ',
        { kind: 'page', title: 'About', slug: 'about', path: '/about', isPublished: true },
        { kind: 'redirect', fromPath: '/about-us', toPath: '/about', type: 'temporary' },
        '',
      ]),
    )

    expect(result).toEqual({
      counts: { forms: 1, submissions: 1, pages: 1, redirects: 1 },
      created: { forms: 1, submissions: 1, pages: 1, redirects: 1 },
      updated: { forms: 0, submissions: 0, pages: 0, redirects: 0 },
      warnings: [],
    })
    const { forms, submissions, pages, redirects } = await contentSnapshot(db)
    expect(forms).toEqual([expect.objectContaining({ description: 'Write to us', is_active: 1 })])
    expect(submissions).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^submission_[0-9A-Za-z]{20}$/),
        data: '{"message":"Hello"}',
        is_read: 0,
        is_starred: 1,
        notes: null,
      }),
    ])
    expect(pages).toEqual([expect.objectContaining({ page_type: 'page', is_published: 1 })])
    expect(pages[0].published_at).toBe(pages[0].created_at)
    expect(redirects).toEqual([expect.objectContaining({ type: 'temporary', is_active: 1 })])
  })

  it('reads Windows line endings and a byte order mark', async () => {
    const path = ndjsonFile(
      ['\uFEFF{"kind":"form","id":"form_a","title":"A"}', '{"kind":"form","id":"form_b","title":"B"}', ''],
      'windows.ndjson',
      '\r\n',
    )
    const result = await importer.importFile(path)
    expect(result.created.forms).toBe(2)
    expect((await contentSnapshot(db)).forms.map((f) => f.title)).toEqual(['A', 'B'])
  })

  it('accepts a submission whose form is defined later in the file', async () => {
    const result = await importer.importFile(
      ndjsonFile([
        { kind: 'submission', formId: 'form_later', data: { n: 1 } },
        { kind: 'submission', formId: 'form_later', data: { n: 2 } },
        { kind: 'form', id: 'form_later', title: 'Defined last' },
      ]),
    )
    expect(result.created).toMatchObject({ forms: 1, submissions: 2 })
  })

  it('converts timestamps to UTC with second precision', async () => {
    const started = now()
    await importer.importFile(
      ndjsonFile([
        { kind: 'form', id: 'form_a', title: 'A', createdAt: '2024-01-05T12:00:00+02:00' },
        {
          kind: 'submission',
          id: 'submission_a',
          formId: 'form_a',
          data: {},
          createdAt: '2024-01-05T10:00:00.123456',
          updatedAt: '2024-01-05T05:00:00-05:00',
        },
      ]),
    )
    const { forms, submissions } = await contentSnapshot(db)
    expect(forms[0]).toMatchObject({ created_at: '2024-01-05T10:00:00Z' })
    // No updatedAt given: the import's own time, as every missing timestamp is now.
    expect(forms[0]?.updated_at >= started).toBe(true)
    expect(submissions[0]).toMatchObject({
      created_at: '2024-01-05T10:00:00Z',
      updated_at: '2024-01-05T10:00:00Z',
    })
  })

  it('updates rows by id, and the later of two records with the same id wins even across batches', async () => {
    await buildForm(db, { id: 'form_a', title: 'Before' })
    await buildSubmission(db, { formId: 'form_a', id: 'submission_old', data: { v: 'before' } })
    const filler = Array.from({ length: 1200 }, (_, i) => ({
      kind: 'submission',
      formId: 'form_a',
      data: { i },
    }))

    const result = await importer.importFile(
      ndjsonFile([
        { kind: 'form', id: 'form_a', title: 'After' },
        { kind: 'submission', id: 'submission_old', formId: 'form_a', data: { v: 'first' } },
        { kind: 'submission', id: 'submission_twice', formId: 'form_a', data: { v: 'first' } },
        { kind: 'submission', id: 'submission_twice', formId: 'form_a', data: { v: 'same batch' } },
        ...filler,
        { kind: 'submission', id: 'submission_twice', formId: 'form_a', data: { v: 'last' } },
        { kind: 'submission', id: 'submission_old', formId: 'form_a', data: { v: 'last' } },
      ]),
    )

    expect(result.counts).toEqual({ forms: 1, submissions: 1205, pages: 0, redirects: 0 })
    expect(result.created).toEqual({ forms: 0, submissions: 1201, pages: 0, redirects: 0 })
    expect(result.updated).toEqual({ forms: 1, submissions: 4, pages: 0, redirects: 0 })
    const rows = await db
      .selectFrom('submissions')
      .select(['id', 'data'])
      .where('id', 'in', ['submission_old', 'submission_twice'])
      .orderBy('id')
      .execute()
    expect(rows).toEqual([
      { id: 'submission_old', data: '{"v":"last"}' },
      { id: 'submission_twice', data: '{"v":"last"}' },
    ])
    expect(await db.selectFrom('submissions').select('id').execute()).toHaveLength(1202)
    expect((await db.selectFrom('forms').select('title').executeTakeFirstOrThrow()).title).toBe('After')
  })

  it('imports nothing, successfully, from an empty file or one of blank lines', async () => {
    for (const [name, content] of [
      ['empty.ndjson', []],
      ['blank.ndjson', ['', '  ', '\t', '']],
    ] as const) {
      const result = await importer.importFile(ndjsonFile(content, name))
      expect(result.counts).toEqual({ forms: 0, submissions: 0, pages: 0, redirects: 0 })
      expect(result.warnings).toEqual([])
    }
  })

  it('imports many submissions in one go', async () => {
    const forms = Array.from({ length: 3 }, (_, i) => ({ kind: 'form', id: `form_${i}`, title: `Form ${i}` }))
    const submissions = Array.from({ length: 20_000 }, (_, i) => ({
      kind: 'submission',
      formId: `form_${i % 3}`,
      data: { email: `person${i}@example.com`, message: 'Hello' },
      createdAt: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    }))
    const result = await importer.importFile(ndjsonFile([...submissions, ...forms]))
    expect(result.created.submissions).toBe(20_000)
    const [{ count }] = await db
      .selectFrom('submissions')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .execute()
    expect(Number(count)).toBe(20_000)
  })
})

describe('refusing an NDJSON file', () => {
  it('refuses a file changed while it is being written, writing nothing and still listing its warnings', async () => {
    await seedDatabase()
    const before = await contentSnapshot(db)
    const path = ndjsonFile([
      { kind: 'redirect', fromPath: '/old', toPath: '/new' },
      { kind: 'redirect', fromPath: '/new', toPath: '/newest' },
    ])
    const chain =
      "line 1 (redirect): redirect chain /old → /new → /newest; consider pointing '/old' straight at '/newest'"
    // The check passes; the file grows as soon as the writing pass begins.
    let changed = false
    const error = await refusal(
      importer.importFile(path, 'cli', ({ phase }) => {
        if (phase !== 'writing' || changed) return
        changed = true
        appendFileSync(
          path,
          `\n${JSON.stringify({ kind: 'page', title: 'Late', slug: 'late', path: '/late' })}`,
        )
      }),
    )
    expect(changed).toBe(true)
    expect(error.problems).toEqual(['the file changed while it was being imported; run the import again'])
    expect(error.warnings).toEqual([chain])
    expect(await contentSnapshot(db)).toEqual(before)
  })

  it('reports every problem with its line number and kind', async () => {
    await buildForm(db, { id: 'form_a' })
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { kind: 'form', title: 'Fine' },
          '',
          { kind: 'submission', formId: 'form_x', data: {} },
          { kind: 'submission', formId: 'form_a', data: [1] },
          '{"kind": "page", "title": "About", "slug": "about", "path": "/about",}',
          { kind: 'widget', title: 'x' },
          { title: 'no kind' },
          '[1, 2]',
          { kind: 'page', title: 'About', slug: 'about', path: 'about', isPublished: 1 },
          { kind: 'redirect', fromPath: '//evil.com', toPath: '/a?b=1' },
          { kind: 'form', title: 'x', colour: 'red' },
          { kind: 'submission', formId: 'form_x', data: {} },
        ]),
      ),
    )
    expect(error.problems).toEqual([
      "line 3 (submission): formId 'form_x' does not exist",
      'line 4 (submission): data must be a JSON object (got an array)',
      'line 5: not valid JSON at column 70: Expected double-quoted property name',
      "line 6: kind must be one of 'form', 'submission', 'page', 'redirect' (got \"widget\")",
      "line 7: kind is required (one of 'form', 'submission', 'page', 'redirect')",
      'line 8: must be a JSON object with a "kind" (got an array)',
      'line 9 (page): isPublished must be true or false (got 1)',
      "line 9 (page): path must start with '/'",
      "line 10 (redirect): fromPath must not start with '//' (that would redirect to another host)",
      "line 10 (redirect): toPath must not contain a query string ('?'): the incoming one is carried over",
      "line 11 (form): unknown field 'colour'",
      "line 12 (submission): formId 'form_x' does not exist",
    ])
    expect(error.message).toBe('Import refused: 12 problems, nothing was written')
  })

  it('reports a malformed line with its line number', async () => {
    const lines: (string | object)[] = Array.from({ length: 40 }, () => ({ kind: 'form', title: 'ok' }))
    lines[26] = '{"kind": "form", "title": "broken"'
    const error = await refusal(importer.importFile(ndjsonFile(lines)))
    expect(error.problems).toEqual([
      "line 27: not valid JSON at column 35: Expected ',' or '}' after property value",
    ])
  })

  it('leaves the database unchanged when the last of 2,000 records is bad', async () => {
    await seedDatabase()
    const before = await contentSnapshot(db)
    const lines: object[] = [
      { kind: 'form', id: 'form_seed', title: 'Renamed' },
      { kind: 'page', id: 'page_seed', title: 'Moved', slug: 'moved', path: '/moved' },
      { kind: 'redirect', id: 'redirect_seed', fromPath: '/seed-old', toPath: '/moved' },
      ...Array.from({ length: 1996 }, (_, i) => ({ kind: 'submission', formId: 'form_seed', data: { i } })),
      { kind: 'submission', id: 'submission_seed_0', formId: 'form_seed', data: 'not an object' },
    ]
    expect(lines).toHaveLength(2000)

    const error = await refusal(importer.importFile(ndjsonFile(lines)))

    expect(error.problems).toEqual(['line 2000 (submission): data must be a JSON object (got a string)'])
    expect(await contentSnapshot(db)).toEqual(before)
  })

  it('loads a bulk import with the submissions order index rebuilt, and leaves the index in place', async () => {
    const lines: object[] = [{ kind: 'form', id: 'form_bulk', title: 'Bulk' }]
    for (let i = 0; i < BULK_SUBMISSIONS; i++) {
      lines.push({
        kind: 'submission',
        formId: 'form_bulk',
        data: { i },
        createdAt: `2024-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`,
      })
    }
    await importer.importFile(ndjsonFile(lines))
    const count = await db
      .selectFrom('submissions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(BULK_SUBMISSIONS)
    const indexes =
      TEST_DIALECT === 'sqlite'
        ? await sql<{
            name: string
          }>`select name from sqlite_master where type = 'index' and tbl_name = 'submissions'`.execute(db)
        : await sql<{
            name: string
          }>`select indexname as name from pg_indexes where tablename = 'submissions' and schemaname = current_schema()`.execute(
            db,
          )
    expect(indexes.rows.map((r) => r.name)).toContain('submissions_form_order')
  })

  it.each([
    ['a small import', 1500],
    ['a bulk import (order index dropped and rebuilt)', BULK_SUBMISSIONS],
  ])('rolls everything back when the database fails partway through %s', async (_, rows) => {
    await seedDatabase()
    // A trigger is the database itself refusing a row, late in the write, after forms and pages went in.
    await refuseSubmissionsNotedExplode(db)
    const before = await contentSnapshot(db)
    const lines: object[] = [
      { kind: 'form', id: 'form_seed', title: 'Renamed' },
      { kind: 'form', id: 'form_new', title: 'New' },
      { kind: 'page', title: 'New page', slug: 'new', path: '/new' },
      { kind: 'redirect', fromPath: '/x', toPath: '/new' },
      ...Array.from({ length: rows }, (_, i) => ({ kind: 'submission', formId: 'form_new', data: { i } })),
      { kind: 'submission', formId: 'form_new', data: {}, notes: 'explode' },
    ]

    await expect(importer.importFile(ndjsonFile(lines))).rejects.toThrow('refused by trigger')
    expect(await contentSnapshot(db)).toEqual(before)
  })

  it('refuses an unknown formId on every line that names it, in line order', async () => {
    const lines: object[] = [
      { kind: 'submission', formId: 'form_ghost', data: {} },
      { kind: 'form', id: 'form_real', title: 'Real', isActive: 'yes' },
      { kind: 'submission', formId: 'form_real', data: {} },
      { kind: 'submission', formId: 'form_ghost', data: {} },
    ]
    const error = await refusal(importer.importFile(ndjsonFile(lines)))
    expect(error.problems).toEqual([
      "line 1 (submission): formId 'form_ghost' does not exist",
      'line 2 (form): isActive must be true or false (got "yes")',
      // The form on line 2 has a problem of its own, but it is in the file: line 3 names it rightly.
      "line 4 (submission): formId 'form_ghost' does not exist",
    ])
  })

  it('lists the first 100 problems in line order and counts the rest', async () => {
    const lines = Array.from({ length: 250 }, (_, i) =>
      i % 2 === 0 ? { kind: 'submission', formId: 'form_missing', data: {} } : { kind: 'form', title: '' },
    )
    const error = await refusal(importer.importFile(ndjsonFile(lines)))
    expect(error.problems).toHaveLength(101)
    expect(error.problems.slice(0, 3)).toEqual([
      "line 1 (submission): formId 'form_missing' does not exist",
      'line 2 (form): title must not be empty',
      "line 3 (submission): formId 'form_missing' does not exist",
    ])
    expect(error.problems[99]).toBe('line 100 (form): title must not be empty')
    expect(error.problems[100]).toBe('…and 150 more problems')
  })
})
