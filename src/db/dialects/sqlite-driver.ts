import { createRequire } from 'node:module'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

/** Which library opened an SQLite file. */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3'

/**
 * An open SQLite connection, the same whichever library provides it: statements shaped as Kysely's
 * `SqliteDialect` calls them (parameters as one array), plus `exec` for pragmas and DDL.
 */
export interface SqliteConnection extends SqliteDatabase {
  readonly driver: SqliteDriverName
  /** Runs SQL that returns nothing the caller needs (pragmas, DDL), with no parameters. */
  exec(sql: string): void
  /** Prepares a statement that returns rows, to read them as arrays (see {@link SqliteArrayStatement}). */
  prepareArrays(sql: string): SqliteArrayStatement
}

/**
 * A statement whose rows come as arrays of values in column order. Both drivers make a row object
 * by setting each column by name from native code, through V8's slowest path for adding a
 * property, with the name made a V8 string again for every row; an array and a loop in JavaScript
 * cost about a fifth less for the read path's key lookup (a row of 14 columns).
 */
export interface SqliteArrayStatement {
  /** The names of the result's columns, in order. */
  readonly columns: readonly string[]
  all(parameters: readonly unknown[]): unknown[][]
}

export interface SqliteOpenOptions {
  /** Opens the file for reading only; fails if it does not exist. */
  readonly?: boolean
}

// The driver is loaded only when SQLite is used: an instance on PostgreSQL does not pay for it.
const require = createRequire(import.meta.url)

type NodeSqlite = typeof import('node:sqlite')

/**
 * Node's own `node:sqlite`, when this runtime has all of it that Lectern uses (a statement's
 * `columns()` and `setReturnArrays()` arrived in 22.16), or undefined: Node 20 has no `node:sqlite`
 * at all.
 */
function nodeSqlite(): NodeSqlite | undefined {
  loaded ??= loadQuietly('node:sqlite') ?? null
  if (loaded === null) return undefined
  const statement = loaded.StatementSync.prototype
  return typeof statement.columns === 'function' && typeof statement.setReturnArrays === 'function'
    ? loaded
    : undefined
}
let loaded: NodeSqlite | null | undefined

/**
 * Loads `node:sqlite` without its "experimental" warning, which Node 22 prints on every command a
 * user runs; any other warning passes through.
 */
function loadQuietly(name: string): NodeSqlite | undefined {
  const emitWarning = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(warning).startsWith('SQLite is an experimental feature')) return
    ;(emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest)
  }) as typeof process.emitWarning
  try {
    return require(name) as NodeSqlite
  } catch {
    return undefined
  } finally {
    process.emitWarning = emitWarning
  }
}

/**
 * The driver this process uses: `node:sqlite` where the runtime has it (no native build to install,
 * and better-sqlite3's addon aborts Node 24), better-sqlite3 elsewhere (Node 20 and 22.0–22.15).
 * `LECTERN_SQLITE_DRIVER` forces one, for comparing them.
 */
export function sqliteDriverName(): SqliteDriverName {
  const forced = process.env.LECTERN_SQLITE_DRIVER
  if (forced === 'node:sqlite' || forced === 'better-sqlite3') return forced
  return nodeSqlite() !== undefined ? 'node:sqlite' : 'better-sqlite3'
}

/** Opens `path` (a file or `:memory:`) with the driver {@link sqliteDriverName} names. */
export function openSqliteConnection(path: string, options: SqliteOpenOptions = {}): SqliteConnection {
  return sqliteDriverName() === 'node:sqlite'
    ? openWithNodeSqlite(path, options)
    : openWithBetterSqlite3(path, options)
}

function openWithBetterSqlite3(path: string, options: SqliteOpenOptions): SqliteConnection {
  let Driver: typeof import('better-sqlite3')
  try {
    Driver = require('better-sqlite3') as typeof import('better-sqlite3')
  } catch (error) {
    throw new Error(
      `SQLite needs Node.js 22.16 or later, or the better-sqlite3 package on Node ${process.versions.node}: run npm install again`,
      { cause: error },
    )
  }
  const readonly = options.readonly ?? false
  const database = new Driver(path, { readonly, fileMustExist: readonly })
  // better-sqlite3's statements already take parameters as one array and report `reader`.
  return {
    driver: 'better-sqlite3',
    prepare: (sql) => database.prepare(sql),
    prepareArrays(sql) {
      const statement = database.prepare(sql).raw(true)
      return {
        columns: statement.columns().map((column) => column.name),
        all: (parameters) => statement.all(parameters) as unknown[][],
      }
    },
    exec: (sql) => {
      database.exec(sql)
    },
    close: () => {
      database.close()
    },
  }
}

function openWithNodeSqlite(path: string, options: SqliteOpenOptions): SqliteConnection {
  const { DatabaseSync } = nodeSqlite() as NodeSqlite
  const database = withSqliteCode(() => new DatabaseSync(path, { readOnly: options.readonly ?? false }))
  return {
    driver: 'node:sqlite',
    prepare(sql) {
      const statement = withSqliteCode(() => database.prepare(sql))
      const reader = statement.columns().length > 0
      return {
        reader,
        all: (parameters) => withSqliteCode(() => statement.all(...(parameters as SqlValue[]))),
        run: (parameters) => withSqliteCode(() => statement.run(...(parameters as SqlValue[]))),
        iterate: (parameters) => withSqliteCode(() => statement.iterate(...(parameters as SqlValue[]))),
      } satisfies SqliteStatement
    },
    prepareArrays(sql) {
      const statement = withSqliteCode(() => database.prepare(sql))
      statement.setReturnArrays(true)
      return {
        columns: statement.columns().map((column) => column.name),
        all: (parameters) =>
          withSqliteCode(() => statement.all(...(parameters as SqlValue[]))) as unknown as unknown[][],
      }
    },
    exec: (sql) => withSqliteCode(() => database.exec(sql)),
    close: () => database.close(),
  }
}

type SqlValue = import('node:sqlite').SQLInputValue

/** SQLite result codes by number, named as better-sqlite3 names them (and `db/errors.ts` reads). */
const RESULT_CODE_NAMES = new Map<number, string>([
  [5, 'SQLITE_BUSY'],
  [6, 'SQLITE_LOCKED'],
  [14, 'SQLITE_CANTOPEN'],
  [19, 'SQLITE_CONSTRAINT'],
  [1555, 'SQLITE_CONSTRAINT_PRIMARYKEY'],
  [2067, 'SQLITE_CONSTRAINT_UNIQUE'],
])

/**
 * Runs `call`, giving a node:sqlite error the `code` better-sqlite3 would have given it (node:sqlite
 * says `ERR_SQLITE_ERROR` and puts the result code in `errcode`), so one table of codes serves both.
 */
function withSqliteCode<T>(call: () => T): T {
  try {
    return call()
  } catch (error) {
    const errcode = (error as { errcode?: unknown } | null)?.errcode
    if (typeof errcode === 'number') {
      // Extended codes (SQLITE_BUSY_SNAPSHOT…) fall back to their primary code's name.
      const name = RESULT_CODE_NAMES.get(errcode) ?? RESULT_CODE_NAMES.get(errcode & 0xff)
      if (name !== undefined) (error as { code: string }).code = name
    }
    throw error
  }
}
