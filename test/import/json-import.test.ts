import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/tables.js'
import type { Importer } from '../../src/services/import/index.js'
import { now } from '../../src/time.js'
import { buildForm, buildPage, buildSubmission } from '../factories.js'
import { contentSnapshot, type ImportDatabase, openImportDatabase, refusal } from './support.js'

let dir: string
let db: Kysely<Database>
let importer: Importer

let opened: ImportDatabase

beforeEach(async () => {
  opened = await openImportDatabase('lectern-import-json-')
  ;({ dir, db, importer } = opened)
})

afterEach(() => opened.close())

function jsonFile(content: unknown, name = 'import.json'): string {
  const path = join(dir, name)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2))
  return path
}

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/

describe('importing a JSON file', () => {
  it('imports forms, submissions, pages and redirects, applying the defaults', async () => {
    const result = await importer.importFile(
      jsonFile({
        forms: [{ id: 'form_contact', title: 'Contact' }],
        submissions: [{ formId: 'form_contact', data: { email: 'ada@example.com' } }],
        pages: [{ title: 'About', slug: 'about', path: '/about' }],
        redirects: [{ fromPath: '/old', toPath: '/about' }],
      }),
    )

    expect(result).toEqual({
      counts: { forms: 1, submissions: 1, pages: 1, redirects: 1 },
      created: { forms: 1, submissions: 1, pages: 1, redirects: 1 },
      updated: { forms: 0, submissions: 0, pages: 0, redirects: 0 },
      warnings: [],
    })
    const { forms, submissions, pages, redirects } = await contentSnapshot(db)
    expect(forms).toEqual([
      {
        id: 'form_contact',
        title: 'Contact',
        description: null,
        is_active: 1,
        created_at: expect.stringMatching(CANONICAL),
        updated_at: expect.stringMatching(CANONICAL),
        // An imported form does not take public posts unless its record says so.
        intake: null,
      },
    ])
    expect(submissions).toEqual([
      {
        id: expect.any(String),
        form_id: 'form_contact',
        data: '{"email":"ada@example.com"}',
        ip_address: null,
        user_agent: null,
        referrer: null,
        submitted_by: null,
        is_read: 0,
        is_starred: 0,
        notes: null,
        created_at: expect.stringMatching(CANONICAL),
        updated_at: expect.stringMatching(CANONICAL),
      },
    ])
    expect(pages).toEqual([
      expect.objectContaining({ page_type: 'page', is_published: 0, published_at: null, path: '/about' }),
    ])
    expect(redirects).toEqual([
      expect.objectContaining({ from_path: '/old', to_path: '/about', type: 'permanent', is_active: 1 }),
    ])
    expect(Math.abs(Date.parse(forms[0].created_at) - Date.now())).toBeLessThan(60_000)
  })

  it('stores every field a record gives', async () => {
    const started = now()
    await importer.importFile(
      jsonFile({
        forms: [
          {
            id: 'form_a',
            title: 'Old form',
            description: 'Retired',
            isActive: false,
            createdAt: '2023-01-01T00:00:00Z',
            updatedAt: '2023-02-01T00:00:00Z',
          },
        ],
        submissions: [
          {
            id: 'submission_a',
            formId: 'form_a',
            data: { nested: { list: [1, 2] }, ok: true },
            ipAddress: '203.0.113.9',
            userAgent: 'curl/8',
            referrer: 'https://example.com/',
            submittedBy: 'ada@example.com',
            isRead: true,
            isStarred: true,
            notes: 'called back',
            createdAt: '2023-03-01T00:00:00Z',
            updatedAt: '2023-03-02T00:00:00Z',
          },
        ],
        pages: [
          {
            id: 'page_home',
            title: 'Home',
            slug: '',
            path: '/',
            pageType: 'landing',
            isPublished: true,
            publishedAt: '2023-04-02T00:00:00Z',
            createdAt: '2023-04-01T00:00:00Z',
          },
        ],
        redirects: [{ id: 'redirect_a', fromPath: '/tmp', toPath: '/', type: 'temporary', isActive: false }],
      }),
    )

    const { forms, submissions, pages, redirects } = await contentSnapshot(db)
    expect(forms[0]).toEqual({
      id: 'form_a',
      title: 'Old form',
      description: 'Retired',
      is_active: 0,
      created_at: '2023-01-01T00:00:00Z',
      updated_at: '2023-02-01T00:00:00Z',
      intake: null,
    })
    expect(submissions[0]).toEqual({
      id: 'submission_a',
      form_id: 'form_a',
      data: '{"nested":{"list":[1,2]},"ok":true}',
      ip_address: '203.0.113.9',
      user_agent: 'curl/8',
      referrer: 'https://example.com/',
      submitted_by: 'ada@example.com',
      is_read: 1,
      is_starred: 1,
      notes: 'called back',
      created_at: '2023-03-01T00:00:00Z',
      updated_at: '2023-03-02T00:00:00Z',
    })
    expect(pages[0]).toEqual({
      id: 'page_home',
      title: 'Home',
      slug: '',
      path: '/',
      page_type: 'landing',
      is_published: 1,
      published_at: '2023-04-02T00:00:00Z',
      created_at: '2023-04-01T00:00:00Z',
      // Given only createdAt: its last update is the import's, as every missing timestamp is now.
      updated_at: expect.stringMatching(CANONICAL),
    })
    expect(pages[0]?.updated_at >= started).toBe(true)
    expect(redirects[0]).toMatchObject({ type: 'temporary', is_active: 0, from_path: '/tmp', to_path: '/' })
  })

  it('gives records without an id a generated one such as form_ followed by 20 base62 characters', async () => {
    await importer.importFile(
      jsonFile({
        forms: [{ title: 'Contact' }],
        pages: [{ title: 'About', slug: 'about', path: '/about' }],
        redirects: [{ fromPath: '/old', toPath: '/about' }],
      }),
    )
    const [form] = await db.selectFrom('forms').select('id').execute()
    await importer.importRecords({ submissions: [{ formId: form.id, data: {} }] })

    const { forms, submissions, pages, redirects } = await contentSnapshot(db)
    expect(forms[0].id).toMatch(/^form_[0-9A-Za-z]{20}$/)
    expect(submissions[0].id).toMatch(/^submission_[0-9A-Za-z]{20}$/)
    expect(pages[0].id).toMatch(/^page_[0-9A-Za-z]{20}$/)
    expect(redirects[0].id).toMatch(/^redirect_[0-9A-Za-z]{20}$/)
  })

  it('updates the existing row when a record carries its id, keeping its creation time', async () => {
    await buildForm(db, { id: 'form_a', title: 'Before', createdAt: '2022-01-01T00:00:00Z' })
    await buildSubmission(db, { formId: 'form_a', id: 'submission_a', createdAt: '2022-01-02T00:00:00Z' })
    await buildPage(db, { id: 'page_a', path: '/a', createdAt: '2022-01-03T00:00:00Z' })

    const result = await importer.importFile(
      jsonFile({
        forms: [{ id: 'form_a', title: 'After' }, { title: 'New' }],
        submissions: [{ id: 'submission_a', formId: 'form_a', data: { edited: true }, isRead: true }],
        pages: [{ id: 'page_a', title: 'Moved', slug: 'b', path: '/b', isPublished: true }],
      }),
    )

    expect(result.created).toEqual({ forms: 1, submissions: 0, pages: 0, redirects: 0 })
    expect(result.updated).toEqual({ forms: 1, submissions: 1, pages: 1, redirects: 0 })
    const { forms, submissions, pages } = await contentSnapshot(db)
    expect(forms).toHaveLength(2)
    expect(forms.find((f) => f.id === 'form_a')).toMatchObject({
      title: 'After',
      created_at: '2022-01-01T00:00:00Z',
    })
    expect(forms.find((f) => f.id === 'form_a')?.updated_at).not.toBe('2022-01-01T00:00:00Z')
    expect(submissions).toEqual([
      expect.objectContaining({
        id: 'submission_a',
        data: '{"edited":true}',
        is_read: 1,
        created_at: '2022-01-02T00:00:00Z',
      }),
    ])
    expect(pages).toEqual([
      expect.objectContaining({
        id: 'page_a',
        path: '/b',
        created_at: '2022-01-03T00:00:00Z',
        published_at: '2022-01-03T00:00:00Z',
      }),
    ])
  })

  it('keeps the submissions of a form that an import updates', async () => {
    await buildForm(db, { id: 'form_a' })
    await buildSubmission(db, { formId: 'form_a' })
    await importer.importFile(jsonFile({ forms: [{ id: 'form_a', title: 'Renamed' }] }))
    expect(await db.selectFrom('submissions').selectAll().execute()).toHaveLength(1)
  })

  it('lets the later record win when an id appears twice, and warns about it', async () => {
    const result = await importer.importFile(
      jsonFile({
        forms: [
          { id: 'form_a', title: 'First' },
          { id: 'form_a', title: 'Second' },
        ],
        submissions: [
          { id: 'submission_a', formId: 'form_a', data: { n: 1 } },
          { id: 'submission_a', formId: 'form_a', data: { n: 2 } },
        ],
      }),
    )
    expect(result.counts).toMatchObject({ forms: 2, submissions: 2 })
    expect(result.created).toMatchObject({ forms: 1, submissions: 1 })
    expect(result.updated).toMatchObject({ forms: 1, submissions: 1 })
    expect(result.warnings).toEqual([
      "forms[1]: id 'form_a' also appears at forms[0]; this later record wins",
    ])
    const { forms, submissions } = await contentSnapshot(db)
    expect(forms.map((f) => f.title)).toEqual(['Second'])
    expect(submissions.map((s) => s.data)).toEqual(['{"n":2}'])
  })

  it('converts timestamps with an offset to UTC, reads those without one as UTC and drops fractions', async () => {
    await importer.importFile(
      jsonFile({
        forms: [
          { id: 'form_offset', title: 'a', createdAt: '2024-01-05T12:00:00+02:00' },
          { id: 'form_local', title: 'b', createdAt: '2024-01-05T10:00:00' },
          { id: 'form_fraction', title: 'c', createdAt: '2024-01-05T10:00:00.987Z' },
          { id: 'form_negative', title: 'd', createdAt: '2024-01-04T23:30:00-10:30' },
        ],
      }),
    )
    const forms = await db.selectFrom('forms').select(['id', 'created_at']).orderBy('id').execute()
    expect(Object.fromEntries(forms.map((f) => [f.id, f.created_at]))).toEqual({
      form_fraction: '2024-01-05T10:00:00Z',
      form_local: '2024-01-05T10:00:00Z',
      form_negative: '2024-01-05T10:00:00Z',
      form_offset: '2024-01-05T10:00:00Z',
    })
  })

  it('gives a published page without publishedAt its createdAt as publication time', async () => {
    await importer.importFile(
      jsonFile({
        pages: [
          { title: 'A', slug: 'a', path: '/a', isPublished: true, createdAt: '2024-01-05T10:00:00Z' },
          {
            title: 'B',
            slug: 'b',
            path: '/b',
            isPublished: true,
            publishedAt: null,
            createdAt: '2024-02-01T00:00:00Z',
          },
          { title: 'C', slug: 'c', path: '/c', isPublished: false, createdAt: '2024-03-01T00:00:00Z' },
        ],
      }),
    )
    const pages = await db.selectFrom('pages').select(['path', 'published_at']).orderBy('path').execute()
    expect(pages).toEqual([
      { path: '/a', published_at: '2024-01-05T10:00:00Z' },
      { path: '/b', published_at: '2024-02-01T00:00:00Z' },
      { path: '/c', published_at: null },
    ])
  })

  it('accepts a submission whose form comes later in the file', async () => {
    const result = await importer.importFile(
      jsonFile(
        '{"submissions": [{"formId": "form_late", "data": {}}], "forms": [{"id": "form_late", "title": "x"}]}',
      ),
    )
    expect(result.created).toMatchObject({ forms: 1, submissions: 1 })
  })

  it('imports nothing, successfully, from an empty file or an empty document', async () => {
    const nothing = {
      counts: { forms: 0, submissions: 0, pages: 0, redirects: 0 },
      created: { forms: 0, submissions: 0, pages: 0, redirects: 0 },
      updated: { forms: 0, submissions: 0, pages: 0, redirects: 0 },
      warnings: [],
    }
    expect(await importer.importFile(jsonFile('', 'empty.json'))).toEqual(nothing)
    expect(await importer.importFile(jsonFile('{}', 'braces.json'))).toEqual(nothing)
    expect(await importer.importFile(jsonFile({ forms: [], redirects: [] }, 'arrays.json'))).toEqual(nothing)
  })

  it('reads a file that starts with a byte order mark', async () => {
    const result = await importer.importFile(jsonFile('\uFEFF{"forms": [{"title": "x"}]}'))
    expect(result.created.forms).toBe(1)
  })
})

describe('refusing a JSON file', () => {
  it('lists every problem of the file with its location, and writes nothing', async () => {
    await buildForm(db, { id: 'form_existing' })
    const before = await contentSnapshot(db)

    const error = await refusal(
      importer.importFile(
        jsonFile({
          forms: [
            { description: 'no title' },
            { title: 'Typo', isActve: false },
            { id: '', title: 'x', createdAt: 'yesterday' },
            { id: 'x'.repeat(201), title: 'x', kind: 'page' },
          ],
          submissions: [
            { formId: 'form_existing', data: ['not', 'an', 'object'] },
            { formId: 'form_existing', data: 'scalar', isRead: 'yes' },
            { formId: 'form_x', data: {} },
            { data: {}, notes: 7 },
            'not a record',
          ],
          pages: [{ title: 'About', slug: 'about', path: 'about', publishedAt: 'soon', page_type: 'x' }],
          redirects: [{ fromPath: '/a', toPath: '/b', type: 'forever' }],
        }),
      ),
    )

    expect(error.problems).toEqual([
      'forms[0].title: is required',
      "forms[1]: unknown field 'isActve' (did you mean 'isActive'?)",
      'forms[2].id: must not be empty',
      'forms[2].createdAt: must be an ISO 8601 date-time such as 2024-01-05T10:00:00Z (got "yesterday")',
      'forms[3].kind: must be \'form\' here (got "page")',
      'forms[3].id: must be at most 128 characters (got 201)',
      'submissions[0].data: must be a JSON object (got an array)',
      'submissions[1].data: must be a JSON object (got a string)',
      'submissions[1].isRead: must be true or false (got "yes")',
      "submissions[2].formId: 'form_x' does not exist",
      'submissions[3].formId: is required',
      'submissions[3].notes: must be a string or null (got a number)',
      'submissions[4]: must be a JSON object (got a string)',
      "pages[0]: unknown field 'page_type' (did you mean 'pageType'?)",
      'pages[0].publishedAt: must be an ISO 8601 date-time such as 2024-01-05T10:00:00Z or null (got "soon")',
      "pages[0].path: must start with '/'",
      "redirects[0].type: must be 'permanent' or 'temporary' (got \"forever\")",
    ])
    expect(error.message).toBe('Import refused: 17 problems, nothing was written')
    expect(error.problemCount).toBe(17)
    expect(await contentSnapshot(db)).toEqual(before)
  })

  it('refuses a submission whose data is an array, a scalar, null or not a plain object', async () => {
    await buildForm(db, { id: 'form_a' })
    const error = await refusal(
      importer.importRecords({
        submissions: [
          { formId: 'form_a', data: [] },
          { formId: 'form_a', data: 42 },
          { formId: 'form_a', data: null },
          { formId: 'form_a' },
          { formId: 'form_a', data: new Date(0) },
        ],
      }),
    )
    expect(error.problems).toEqual([
      'submissions[0].data: must be a JSON object (got an array)',
      'submissions[1].data: must be a JSON object (got a number)',
      'submissions[2].data: must be a JSON object (got null)',
      'submissions[3].data: is required',
      'submissions[4].data: must be a JSON object (got a Date)',
    ])
  })

  it('refuses a submission whose form exists neither in the database nor in the file', async () => {
    const error = await refusal(
      importer.importFile(
        jsonFile({ forms: [{ id: 'form_a', title: 'A' }], submissions: [{ formId: 'form_b', data: {} }] }),
      ),
    )
    expect(error.problems).toEqual(["submissions[0].formId: 'form_b' does not exist"])
    expect(error.message).toBe('Import refused: 1 problem, nothing was written')
  })

  it('refuses unknown top-level keys and collections that are not arrays', async () => {
    const error = await refusal(
      importer.importFile(jsonFile({ form: [], pages: { title: 'x' }, redirects: null, extra: 1 })),
    )
    expect(error.problems).toEqual([
      "unknown top-level key 'form' (did you mean 'forms'?); expected forms, submissions, pages, redirects",
      'pages: must be an array (got an object)',
      'redirects: must be an array (got null)',
      "unknown top-level key 'extra'; expected forms, submissions, pages, redirects",
    ])
  })

  it('refuses a document that is not an object', async () => {
    const error = await refusal(importer.importFile(jsonFile('[{"title": "x"}]')))
    expect(error.problems).toEqual([
      'the file must hold a JSON object such as {"forms": [], "pages": []} (got an array)',
    ])
  })

  it('reports a JSON syntax error with its line and column', async () => {
    const missingValue = await refusal(
      importer.importFile(jsonFile('{\n  "forms": [\n    {"title": }\n  ]\n}')),
    )
    expect(missingValue.problems).toEqual([
      "the file is not valid JSON at line 3, column 15: Unexpected token '}'",
    ])
    const trailingComma = await refusal(
      importer.importFile(jsonFile('{\n  "forms": [\n    {"title": "x",}\n  ]\n}')),
    )
    expect(trailingComma.problems).toEqual([
      'the file is not valid JSON at line 3, column 19: Expected double-quoted property name',
    ])
    const truncated = await refusal(importer.importFile(jsonFile('{\n  "forms": [\n')))
    expect(truncated.problems).toEqual([
      'the file is not valid JSON at line 3, column 1: Unexpected end of JSON input',
    ])
  })

  it('refuses a file that is neither .json nor .ndjson, and one that does not exist', async () => {
    const csv = await refusal(importer.importFile(jsonFile('title\nx', 'forms.csv')))
    expect(csv.problems[0]).toMatch(/forms\.csv' is neither a \.json nor a \.ndjson file/)
    const missing = await refusal(importer.importFile(join(dir, 'missing.json')))
    expect(missing.problems).toEqual([`cannot read '${join(dir, 'missing.json')}': no such file`])
  })

  it('refuses a page path that the file or the database already uses', async () => {
    await buildPage(db, { id: 'page_existing', path: '/taken' })
    const error = await refusal(
      importer.importFile(
        jsonFile({
          pages: [
            { title: 'A', slug: 'a', path: '/a' },
            { title: 'A again', slug: 'a', path: '/a' },
            { title: 'Taken', slug: 'taken', path: '/taken' },
          ],
        }),
      ),
    )
    expect(error.problems).toEqual([
      "pages[1].path: '/a' is already the path of the page at pages[0]",
      "pages[2].path: '/taken' is already the path of page 'page_existing' in the database",
    ])
  })

  it('refuses a page path used twice on a page that has other problems too, comparing no unreadable path', async () => {
    await buildPage(db, { id: 'page_existing', path: '/taken' })
    const error = await refusal(
      importer.importFile(
        jsonFile({
          pages: [
            { title: 'A', slug: 'a', path: '/a' },
            { title: ' ', slug: 'a', path: '/a' },
            { title: 'Taken', slug: 'taken', path: '/taken', publishedAt: 'soon' },
            { title: 'B', slug: 'b', path: 'b' },
            { title: 'B again', slug: 'b', path: 'b' },
          ],
        }),
      ),
    )
    expect(error.problems).toEqual([
      'pages[1].title: must not be empty',
      "pages[1].path: '/a' is already the path of the page at pages[0]",
      'pages[2].publishedAt: must be an ISO 8601 date-time such as 2024-01-05T10:00:00Z or null (got "soon")',
      "pages[2].path: '/taken' is already the path of page 'page_existing' in the database",
      "pages[3].path: must start with '/'",
      "pages[4].path: must start with '/'",
    ])
  })

  it('judges page paths by the later of two records with one id, even when the later has problems', async () => {
    await buildPage(db, { id: 'page_existing', path: '/taken' })
    const error = await refusal(
      importer.importFile(
        jsonFile({
          pages: [
            { id: 'page_a', title: 'A', slug: 'a', path: '/taken' },
            { id: 'page_a', title: '', slug: 'a', path: '/a' },
            { id: 'page_b', title: 'B', slug: 'b', path: '/taken' },
            { id: 'page_b', title: 'B', slug: 'b', path: 'b' },
          ],
        }),
      ),
    )
    expect(error.problems).toEqual([
      'pages[1].title: must not be empty',
      "pages[3].path: must start with '/'",
    ])
  })

  it('lets a submission name a form of the file that has problems, blaming only the form', async () => {
    const error = await refusal(
      importer.importFile(
        jsonFile({
          forms: [{ id: 'form_a', title: '', isActive: 'yes' }],
          submissions: [{ formId: 'form_a', data: {} }],
        }),
      ),
    )
    expect(error.problems).toEqual([
      'forms[0].title: must not be empty',
      'forms[0].isActive: must be true or false (got "yes")',
    ])
  })

  it('lets pages swap their paths in one import', async () => {
    await buildPage(db, { id: 'page_a', path: '/a' })
    await buildPage(db, { id: 'page_b', path: '/b' })
    await importer.importFile(
      jsonFile({
        pages: [
          { id: 'page_a', title: 'A', slug: 'b', path: '/b' },
          { id: 'page_b', title: 'B', slug: 'a', path: '/a' },
        ],
      }),
    )
    const pages = await db.selectFrom('pages').select(['id', 'path']).orderBy('id').execute()
    expect(pages).toEqual([
      { id: 'page_a', path: '/b' },
      { id: 'page_b', path: '/a' },
    ])
  })

  it('keeps the warnings of a refused import on its error, so that one run shows them with the problems', async () => {
    const error = await refusal(
      importer.importFile(
        jsonFile({
          forms: [
            { id: 'form_a', title: 'First' },
            { id: 'form_a', title: 'Second' },
          ],
          pages: [{ title: 'No path', slug: 'no-path' }],
        }),
      ),
    )
    expect(error.problems).toEqual(['pages[0].path: is required'])
    expect(error.warnings).toEqual(["forms[1]: id 'form_a' also appears at forms[0]; this later record wins"])
    expect((await contentSnapshot(db)).forms).toEqual([])
  })

  it('lists the first 100 warnings of a refused import and counts the rest, as it does its problems', async () => {
    const forms = Array.from({ length: 151 }, (_, i) => ({ id: 'form_a', title: `Form ${i}` }))
    const error = await refusal(
      importer.importFile(jsonFile({ forms, pages: [{ title: 'No path', slug: 'x' }] })),
    )
    expect(error.warnings).toHaveLength(101)
    expect(error.warnings[0]).toBe("forms[1]: id 'form_a' also appears at forms[0]; this later record wins")
    expect(error.warnings[99]).toBe(
      "forms[100]: id 'form_a' also appears at forms[99]; this later record wins",
    )
    expect(error.warnings[100]).toBe('…and 50 more warnings')
  })

  it('lists the first 100 problems and counts the rest', async () => {
    const forms = Array.from({ length: 150 }, () => ({ title: 42 }))
    const error = await refusal(importer.importFile(jsonFile({ forms })))
    expect(error.problems).toHaveLength(101)
    expect(error.problems[0]).toBe('forms[0].title: must be a string (got a number)')
    expect(error.problems[99]).toBe('forms[99].title: must be a string (got a number)')
    expect(error.problems[100]).toBe('…and 50 more problems')
    expect(error.message).toBe('Import refused: 150 problems, nothing was written')
  })
})

describe("a form record's intake", () => {
  const stored = async (id: string) => {
    const row = await db.selectFrom('forms').select('intake').where('id', '=', id).executeTakeFirstOrThrow()
    return row.intake === null ? null : (JSON.parse(row.intake) as Record<string, unknown>)
  }

  it('stores the intake a record gives, with the defaults of what it leaves out', async () => {
    await importer.importFile(
      jsonFile({
        forms: [
          {
            id: 'form_contact',
            title: 'Contact',
            intake: {
              enabled: true,
              allowedOrigins: ['https://www.example.com'],
              fields: [{ name: 'email', type: 'email', required: true }],
            },
          },
        ],
      }),
    )
    expect(await stored('form_contact')).toEqual({
      enabled: true,
      allowedOrigins: ['https://www.example.com'],
      redirectUrl: null,
      storeIpAddress: true,
      retentionDays: null,
      notifyEmails: [],
      fields: [
        { name: 'email', label: 'email', type: 'email', required: true, options: null, maxLength: null },
      ],
    })
  })

  it('leaves a stored intake as it is when a record of the same form has none', async () => {
    await importer.importFile(jsonFile({ forms: [{ id: 'form_a', title: 'A', intake: { enabled: true } }] }))
    await importer.importFile(jsonFile({ forms: [{ id: 'form_a', title: 'A again' }] }, 'again.json'))
    expect(await stored('form_a')).toMatchObject({ enabled: true })
  })

  it('refuses an intake that breaks its rules, naming each problem, and writes nothing', async () => {
    const error = await refusal(
      importer.importFile(
        jsonFile({
          forms: [
            {
              id: 'form_a',
              title: 'A',
              intake: {
                allowedOrigins: ['https://www.example.com/path'],
                retentionDays: 0,
                fields: [{ name: '_secret', type: 'colour' }],
              },
            },
          ],
        }),
      ),
    )
    expect(error.problems).toHaveLength(1)
    expect(error.problems[0]).toMatch(/^forms\[0\]\.intake: /)
    for (const part of [
      'allowedOrigins[0] must be an origin',
      'retentionDays must be',
      'fields[0].name must not begin with _',
      'fields[0].type must be one of',
    ])
      expect(error.problems[0]).toContain(part)
    expect((await contentSnapshot(db)).forms).toEqual([])
  })

  it('names a setting of the wrong type and what breaks the rules of the others, in one run', async () => {
    const error = await refusal(
      importer.importFile(
        jsonFile({
          forms: [
            {
              id: 'form_a',
              title: 'A',
              intake: { enabled: 'yes', allowedOrigins: ['not an origin'], retentionDays: 0 },
            },
          ],
        }),
      ),
    )
    expect(error.problems).toEqual([
      'forms[0].intake: enabled: expected boolean (got "yes"); ' +
        'allowedOrigins[0] must be an origin such as https://www.example.com, with no path (got "not an origin"); ' +
        'retentionDays must be an integer from 1 to 36500, or null (got 0)',
    ])
  })
})
