import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import semver from 'semver'
import { afterAll, describe, expect, it } from 'vitest'
import { openSqliteConnection, sqliteDriverName } from '../../src/db/dialects/sqlite-driver.js'
import { TEST_DIALECT } from '../harness.js'

const dir = mkdtempSync(join(tmpdir(), 'lectern-sqlite-driver-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The Node.js versions npm installs the better-sqlite3 fallback on (it skips it on the others). */
const fallbackRange: string = JSON.parse(
  readFileSync(new URL('../../packages/sqlite-fallback/package.json', import.meta.url), 'utf8'),
).engines.node

/** The `code` of what `call` throws. */
function codeOf(call: () => unknown): unknown {
  try {
    call()
  } catch (error) {
    return (error as { code?: unknown }).code
  }
  throw new Error('expected the call to throw')
}

// The driver under SQLite: run once, in the SQLite pass, on whichever Node.js runs the suite.
describe.runIf(TEST_DIALECT === 'sqlite')('the SQLite driver', () => {
  it('is node:sqlite exactly where npm skips the better-sqlite3 fallback', () => {
    const expected = semver.satisfies(process.versions.node, fallbackRange) ? 'better-sqlite3' : 'node:sqlite'
    expect(sqliteDriverName()).toBe(expected)
    const connection = openSqliteConnection(':memory:')
    expect(connection.driver).toBe(expected)
    connection.close()
  })

  it('tells statements that return rows from those that do not, and binds parameters given as one array', () => {
    const connection = openSqliteConnection(':memory:')
    connection.exec('create table notes (id integer primary key, body text not null)')
    const insert = connection.prepare('insert into notes (body) values (?)')
    const returning = connection.prepare('insert into notes (body) values (?) returning id')
    const select = connection.prepare('select id, body from notes where id >= ? order by id')
    expect([insert.reader, returning.reader, select.reader]).toEqual([false, true, true])
    expect(insert.run(['first'])).toMatchObject({ changes: 1, lastInsertRowid: 1 })
    expect(returning.all(['second'])).toEqual([expect.objectContaining({ id: 2 })])
    expect(select.all([2]).map((row) => ({ ...(row as object) }))).toEqual([{ id: 2, body: 'second' }])
    expect([...select.iterate([1])]).toHaveLength(2)
    connection.close()
  })

  it('reads rows as arrays in column order, with the columns named, on either driver', () => {
    const connection = openSqliteConnection(':memory:')
    connection.exec('create table notes (id integer primary key, body text, score real, raw blob)')
    connection.exec("insert into notes (body, score, raw) values ('first', 1.5, x'00ff'), (null, null, null)")
    const select = connection.prepareArrays(
      'select id, body, score, raw, id as again from notes where id >= ?',
    )
    expect(select.columns).toEqual(['id', 'body', 'score', 'raw', 'again'])
    const rows = select.all([1])
    expect(rows.map((row) => row.slice(0, 3))).toEqual([
      [1, 'first', 1.5],
      [2, null, null],
    ])
    expect(Buffer.from(rows[0]?.[3] as Uint8Array)).toEqual(Buffer.from([0, 255]))
    expect(rows.map((row) => row[4])).toEqual([1, 2])
    expect(select.all([3])).toEqual([])
    connection.close()
  })

  it('names a taken unique value and a locked database as better-sqlite3 does, on either driver', () => {
    const file = join(dir, 'codes.db')
    const connection = openSqliteConnection(file)
    connection.exec('pragma journal_mode = WAL')
    connection.exec('create table t (id integer primary key, name text unique)')
    connection.exec("insert into t (id, name) values (1, 'a')")
    expect(codeOf(() => connection.prepare('insert into t (name) values (?)').run(['a']))).toBe(
      'SQLITE_CONSTRAINT_UNIQUE',
    )
    expect(codeOf(() => connection.prepare('insert into t (id) values (?)').run([1]))).toBe(
      'SQLITE_CONSTRAINT_PRIMARYKEY',
    )
    const other = openSqliteConnection(file)
    other.exec('pragma busy_timeout = 0')
    connection.exec('begin exclusive')
    expect(codeOf(() => other.exec("insert into t (name) values ('b')"))).toBe('SQLITE_BUSY')
    connection.exec('rollback')
    other.close()
    connection.close()
  })

  it('opens a file read-only only if it exists, and never creates it', () => {
    const missing = join(dir, 'missing.db')
    expect(codeOf(() => openSqliteConnection(missing, { readonly: true }))).toBe('SQLITE_CANTOPEN')
    expect(() => readFileSync(missing)).toThrow()
  })
})
