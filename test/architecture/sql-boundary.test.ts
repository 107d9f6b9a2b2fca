import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SRC, sourceFiles } from './source-files.js'

/**
 * "Services are rules, repositories are SQL" (ARCHITECTURE.md), read from the code: every query is
 * built in `src/db/` (its repositories, dialects, migrations and bulk-write machinery), where it has
 * a name beside its table; the services call those names with their transaction.
 */

/** What building a query looks like in Kysely: a statement's builder, raw SQL, or schema changes. */
const QUERY_BUILDING = [
  /\.(selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto)\(/,
  /\bsql(<[^>]*>)?`/,
  /\bsql\.(raw|ref|join|table|id|lit|val)\(/,
  /\.schema\.(createTable|alterTable|dropTable|createIndex|dropIndex)\(/,
]
/** A run-time import from Kysely (`import type` is only shapes, and vanishes when compiled). */
const KYSELY_VALUE_IMPORT = /^import\s+(?!type\s)[^'"]*from\s+['"]kysely['"]/m

const outsideDb = sourceFiles(SRC)
  .map((file) => relative(SRC, file))
  .filter((file) => !file.startsWith('db/'))

describe('where SQL is written', () => {
  it('reads the files outside the database layer, services among them, so the rule is not vacuous', () => {
    expect(outsideDb.filter((file) => file.startsWith('services/')).length).toBeGreaterThan(40)
  })

  it('builds every query in src/db: no file outside it holds a statement, raw SQL or a schema change', () => {
    const builders = outsideDb.flatMap((file) => {
      const lines = readFileSync(join(SRC, file), 'utf8').split('\n')
      return lines.flatMap((line, index) =>
        QUERY_BUILDING.some((pattern) => pattern.test(line)) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
      )
    })
    expect(builders).toEqual([])
  })

  it('imports only Kysely types outside src/db', () => {
    const importers = outsideDb.filter((file) =>
      KYSELY_VALUE_IMPORT.test(readFileSync(join(SRC, file), 'utf8')),
    )
    expect(importers).toEqual([])
  })

  it('recognises a query built outside src/db, so a passing run means there is none', () => {
    const sample = [
      "await trx.selectFrom('forms').select('id').execute()",
      'await sql`select 1`.execute(db)',
      "const column = sql.ref('id')",
      'const statement = sql<number>`select 1`',
      "await db.schema.createTable('t').execute()",
    ]
    for (const line of sample) expect(QUERY_BUILDING.some((pattern) => pattern.test(line))).toBe(true)
    expect(KYSELY_VALUE_IMPORT.test("import { sql } from 'kysely'")).toBe(true)
    expect(KYSELY_VALUE_IMPORT.test("import type { Kysely } from 'kysely'")).toBe(false)
  })
})
