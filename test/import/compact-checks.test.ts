import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/tables.js'
import type { Importer } from '../../src/services/import/index.js'
import { buildPage, buildRedirect } from '../factories.js'
import { contentSnapshot, type ImportDatabase, openImportDatabase, refusal } from './support.js'

let dir: string
let db: Kysely<Database>
let importer: Importer
let opened: ImportDatabase

beforeEach(async () => {
  opened = await openImportDatabase('lectern-import-compact-')
  ;({ dir, db, importer } = opened)
})

afterEach(() => opened.close())

function ndjsonFile(records: readonly object[]): string {
  const path = join(dir, 'import.ndjson')
  writeFileSync(path, records.map((record) => JSON.stringify(record)).join('\n'))
  return path
}

describe('the checks across the records of an NDJSON import', () => {
  it('reports a page path used twice in a two-line file on the second line, naming the first', async () => {
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { kind: 'page', title: 'A', slug: 'a', path: '/same' },
          { kind: 'page', title: 'B', slug: 'b', path: '/same' },
        ]),
      ),
    )
    expect(error.problems).toEqual(["line 2 (page): path '/same' is already the path of the page at line 1"])
    expect(await db.selectFrom('pages').select('id').execute()).toEqual([])
  })

  it('judges page paths by the record each id keeps, so a replaced record gives its path up', async () => {
    const result = await importer.importFile(
      ndjsonFile([
        { kind: 'page', id: 'page_a', title: 'A', slug: 'a', path: '/shared' },
        { kind: 'page', id: 'page_b', title: 'B', slug: 'b', path: '/shared' },
        { kind: 'page', id: 'page_a', title: 'A', slug: 'a', path: '/a' },
      ]),
    )
    expect(result.counts.pages).toBe(3)
    expect(await db.selectFrom('pages').select(['id', 'path']).orderBy('id').execute()).toEqual([
      { id: 'page_a', path: '/a' },
      { id: 'page_b', path: '/shared' },
    ])
  })

  it('tells apart paths that differ only in characters outside ASCII', async () => {
    await importer.importFile(
      ndjsonFile([
        { kind: 'page', title: 'Composed', slug: 'c', path: '/\u00fcber' },
        { kind: 'page', title: 'Decomposed', slug: 'd', path: '/u\u0308ber' },
        { kind: 'page', title: 'Replacement', slug: 'r', path: '/\ufffd' },
        { kind: 'page', title: 'Emoji', slug: 'e', path: '/\u{1f600}' },
      ]),
    )
    expect((await db.selectFrom('pages').select('path').orderBy('path').execute()).length).toBe(4)
  })

  it('refuses a loop across the file and stored redirects on the line that closes it, writing nothing', async () => {
    await buildRedirect(db, { id: 'redirect_ab', fromPath: '/a', toPath: '/b' })
    await buildRedirect(db, { id: 'redirect_bc', fromPath: '/b', toPath: '/c' })
    await buildPage(db, { id: 'page_kept', path: '/kept' })
    const before = await contentSnapshot(db)
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { kind: 'redirect', fromPath: '/x', toPath: '/y' },
          { kind: 'page', title: 'New', slug: 'new', path: '/new' },
          { kind: 'redirect', fromPath: '/c', toPath: '/a' },
        ]),
      ),
    )
    expect(error.problems).toEqual(['line 3 (redirect): toPath creates a redirect loop: /c → /a → /b → /c'])
    expect(await contentSnapshot(db)).toEqual(before)
  })

  it('names both lines when two records of the file redirect the same path', async () => {
    const error = await refusal(
      importer.importFile(
        ndjsonFile([
          { kind: 'redirect', fromPath: '/from', toPath: '/one' },
          { kind: 'redirect', fromPath: '/from', toPath: '/two' },
        ]),
      ),
    )
    expect(error.problems).toEqual([
      "line 2 (redirect): fromPath '/from' is already redirected by the redirect at line 1",
    ])
  })

  it('warns about a chain that only stored redirects start, naming the stored one', async () => {
    await buildRedirect(db, { id: 'redirect_first', fromPath: '/first', toPath: '/second' })
    await buildRedirect(db, { id: 'redirect_second', fromPath: '/second', toPath: '/third' })
    const result = await importer.importFile(
      ndjsonFile([{ kind: 'redirect', fromPath: '/third', toPath: '/end' }]),
    )
    expect(result.warnings).toEqual([
      "line 1 (redirect): redirect chain /first → /second → /third → /end (starting at redirect 'redirect_first' in the database); consider pointing '/first' straight at '/end'",
      "line 1 (redirect): redirect chain /second → /third → /end (starting at redirect 'redirect_second' in the database); consider pointing '/second' straight at '/end'",
    ])
  })
})
