import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/tables.js'
import type { Importer } from '../../src/services/import/index.js'
import { buildRedirect } from '../factories.js'
import { type ImportDatabase, openImportDatabase, refusal } from './support.js'

let dir: string
let db: Kysely<Database>
let importer: Importer

let opened: ImportDatabase

beforeEach(async () => {
  opened = await openImportDatabase('lectern-import-redirects-')
  ;({ dir, db, importer } = opened)
})

afterEach(() => opened.close())

function ndjsonFile(records: readonly object[]): string {
  const path = join(dir, 'redirects.ndjson')
  writeFileSync(path, records.map((record) => JSON.stringify({ kind: 'redirect', ...record })).join('\n'))
  return path
}

const storedRedirects = () =>
  db.selectFrom('redirects').select(['id', 'from_path', 'to_path']).orderBy('from_path').execute()

describe('importing redirects', () => {
  it.each([
    ['//evil.com', "must not start with '//' (that would redirect to another host)"],
    ['/a?b=1', "must not contain a query string ('?'): the incoming one is carried over"],
    ['/a#x', "must not contain a fragment ('#')"],
    ['/a\\b', 'must not contain a backslash (browsers read it as a slash)'],
    ['/a\u0000', 'must not contain control characters (found U+0000)'],
    ['/a\r\nSet-Cookie: x', 'must not contain control characters (found U+000D)'],
    ['/a\u007f', 'must not contain control characters (found U+007F)'],
    ['relative', "must start with '/'"],
    [`/${'a'.repeat(2048)}`, 'must be at most 2048 characters long (it has 2049)'],
  ])('refuses the path %j in either field', async (path, reason) => {
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { fromPath: path, toPath: '/fine' },
          { fromPath: '/fine-too', toPath: path },
        ]),
      ),
    )
    expect(error.problems).toEqual([
      `line 1 (redirect): fromPath ${reason}`,
      `line 2 (redirect): toPath ${reason}`,
    ])
    expect(await storedRedirects()).toEqual([])
  })

  it('refuses a fromPath that the file already redirects', async () => {
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { fromPath: '/old', toPath: '/a' },
          { fromPath: '/other', toPath: '/a' },
          { fromPath: '/old', toPath: '/b' },
        ]),
      ),
    )
    expect(error.problems).toEqual([
      "line 3 (redirect): fromPath '/old' is already redirected by the redirect at line 1",
    ])
  })

  it('refuses a fromPath that a stored redirect already has', async () => {
    await buildRedirect(db, { id: 'redirect_stored', fromPath: '/old', toPath: '/a' })
    const error = await refusal(importer.importFile(ndjsonFile([{ fromPath: '/old', toPath: '/b' }])))
    expect(error.problems).toEqual([
      "line 1 (redirect): fromPath '/old' is already redirected by redirect 'redirect_stored' in the database",
    ])
  })

  it('refuses a fromPath that the file already redirects when the record has another problem too', async () => {
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { fromPath: '/old', toPath: '/a' },
          { fromPath: '/old', toPath: '/b', type: 'forever' },
        ]),
      ),
    )
    expect(error.problems).toEqual([
      "line 2 (redirect): type must be 'permanent' or 'temporary' (got \"forever\")",
      "line 2 (redirect): fromPath '/old' is already redirected by the redirect at line 1",
    ])
  })

  it('refuses a stored fromPath on a record whose toPath is refused, following it nowhere', async () => {
    await buildRedirect(db, { id: 'redirect_stored', fromPath: '/old', toPath: '/a' })
    const error = await refusal(importer.importFile(ndjsonFile([{ fromPath: '/old', toPath: 'new' }])))
    expect(error.problems).toEqual([
      "line 1 (redirect): toPath must start with '/'",
      "line 1 (redirect): fromPath '/old' is already redirected by redirect 'redirect_stored' in the database",
    ])
  })

  it('treats paths as exact and case-sensitive when checking that fromPath is unique', async () => {
    await buildRedirect(db, { fromPath: '/old', toPath: '/a' })
    const result = await importer.importFile(
      ndjsonFile([
        { fromPath: '/Old', toPath: '/a' },
        { fromPath: '/old/', toPath: '/a' },
      ]),
    )
    expect(result.created.redirects).toBe(2)
  })

  it('replaces a stored redirect when a record carries its id', async () => {
    await buildRedirect(db, {
      id: 'redirect_a',
      fromPath: '/old',
      toPath: '/a',
      createdAt: '2022-01-01T00:00:00Z',
    })
    const result = await importer.importFile(
      ndjsonFile([{ id: 'redirect_a', fromPath: '/old', toPath: '/b', type: 'temporary' }]),
    )
    expect(result.updated.redirects).toBe(1)
    const [row] = await db.selectFrom('redirects').selectAll().execute()
    expect(row).toMatchObject({
      id: 'redirect_a',
      from_path: '/old',
      to_path: '/b',
      type: 'temporary',
      created_at: '2022-01-01T00:00:00Z',
    })
  })

  it('lets stored redirects swap their fromPaths in one import', async () => {
    await buildRedirect(db, { id: 'redirect_a', fromPath: '/a', toPath: '/x' })
    await buildRedirect(db, { id: 'redirect_b', fromPath: '/b', toPath: '/y' })
    await importer.importFile(
      ndjsonFile([
        { id: 'redirect_a', fromPath: '/b', toPath: '/x' },
        { id: 'redirect_b', fromPath: '/a', toPath: '/y' },
      ]),
    )
    expect(await storedRedirects()).toEqual([
      { id: 'redirect_b', from_path: '/a', to_path: '/y' },
      { id: 'redirect_a', from_path: '/b', to_path: '/x' },
    ])
  })

  it('refuses a loop made of a stored redirect and an imported one', async () => {
    await buildRedirect(db, { id: 'redirect_ab', fromPath: '/a', toPath: '/b' })
    const error = await refusal(importer.importFile(ndjsonFile([{ fromPath: '/b', toPath: '/a' }])))
    expect(error.problems).toEqual(['line 1 (redirect): toPath creates a redirect loop: /b → /a → /b'])
    expect(await storedRedirects()).toEqual([{ id: 'redirect_ab', from_path: '/a', to_path: '/b' }])
  })

  it('refuses a loop within the file once, on its first record', async () => {
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { fromPath: '/start', toPath: '/a' },
          { fromPath: '/a', toPath: '/b' },
          { fromPath: '/b', toPath: '/c' },
          { fromPath: '/c', toPath: '/a' },
        ]),
      ),
    )
    expect(error.problems).toEqual(['line 2 (redirect): toPath creates a redirect loop: /a → /b → /c → /a'])
  })

  it('refuses a loop through a record that has another problem too', async () => {
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { fromPath: '/a', toPath: '/b', isActive: 'yes' },
          { fromPath: '/b', toPath: '/a' },
        ]),
      ),
    )
    expect(error.problems).toEqual([
      'line 1 (redirect): isActive must be true or false (got "yes")',
      'line 1 (redirect): toPath creates a redirect loop: /a → /b → /a',
    ])
  })

  it('refuses a redirect to itself', async () => {
    const error = await refusal(importer.importFile(ndjsonFile([{ fromPath: '/a', toPath: '/a' }])))
    expect(error.problems).toEqual(['line 1 (redirect): toPath creates a redirect loop: /a → /a'])
  })

  it('accepts a record that breaks a stored loop by replacing one of its redirects', async () => {
    await buildRedirect(db, { id: 'redirect_ab', fromPath: '/a', toPath: '/b' })
    const result = await importer.importFile(
      ndjsonFile([
        { id: 'redirect_ab', fromPath: '/a', toPath: '/c' },
        { fromPath: '/b', toPath: '/a' },
      ]),
    )
    expect(result.counts.redirects).toBe(2)
  })

  it('accepts chains but warns about each one, with where to point it instead', async () => {
    await buildRedirect(db, { id: 'redirect_stored', fromPath: '/legacy', toPath: '/old' })
    const result = await importer.importFile(
      ndjsonFile([
        { fromPath: '/old', toPath: '/new' },
        { fromPath: '/new', toPath: '/newest' },
      ]),
    )
    expect(result.created.redirects).toBe(2)
    expect(result.warnings).toEqual([
      "line 1 (redirect): redirect chain /legacy → /old → /new → /newest (starting at redirect 'redirect_stored' in the database); consider pointing '/legacy' straight at '/newest'",
      "line 1 (redirect): redirect chain /old → /new → /newest; consider pointing '/old' straight at '/newest'",
    ])
    expect(await storedRedirects()).toHaveLength(3)
  })

  it('reports redirect problems of a JSON file at their array index', async () => {
    await buildRedirect(db, { fromPath: '/a', toPath: '/b' })
    const error = await refusal(
      importer.importRecords({
        redirects: [
          { fromPath: '/b', toPath: '/a' },
          { fromPath: '/a', toPath: '/c' },
        ],
      }),
    )
    expect(error.problems).toEqual([
      'redirects[0].toPath: creates a redirect loop: /b → /a → /b',
      "redirects[1].fromPath: '/a' is already redirected by redirect '" +
        (await db.selectFrom('redirects').select('id').executeTakeFirstOrThrow()).id +
        "' in the database",
    ])
  })
})
