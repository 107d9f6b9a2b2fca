import { existsSync, mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import {
  type Compilable,
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type SqliteStatement,
  sql,
} from 'kysely'
import { LRUCache } from 'lru-cache'
import { ValidationError } from '../../errors.js'
import { type DriverErrorCodes, TranslatingDialect, translateDatabaseError } from '../errors.js'
import type { DatabaseHandle } from '../handle.js'
import { bindValues, type PreparedQuery } from '../prepared.js'
import type { Database } from '../tables.js'
import {
  BACKSTOP_AUTOCHECKPOINT_PAGES,
  type BackgroundCheckpoints,
  DEFAULT_AUTOCHECKPOINT_PAGES,
  startBackgroundCheckpoints,
} from './sqlite-checkpoints.js'
import { openSqliteConnection, type SqliteArrayStatement, type SqliteConnection } from './sqlite-driver.js'

export const SQLITE_ERROR_CODES: DriverErrorCodes = {
  // better-sqlite3 names the extended codes, node:sqlite the primary one (see `sqlite-driver.ts`).
  unavailable: new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT', 'SQLITE_CANTOPEN']),
  unique: new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']),
  invalidText: new Set(),
}

/**
 * The page size of a file `openSqlite` creates. Random pages of the benchmark's 1M form cost the
 * server 10–23% less CPU than with 4 KiB pages (16 KiB: about the same gain, but 44 MB more peak
 * memory in `lectern import` of the million, against 17 MB at 8 KiB).
 */
export const PAGE_SIZE = 8_192

/**
 * Opens the SQLite file `file`, or `:memory:`, creating it and its directory if needed unless
 * `create` is false.
 */
export function openSqlite(
  file: string,
  {
    create = true,
    backgroundCheckpoints = false,
  }: { create?: boolean; backgroundCheckpoints?: boolean } = {},
): DatabaseHandle {
  if (file === '')
    throw new ValidationError('DATABASE_URL sqlite: needs a file name, e.g. sqlite:./data/lectern.db')
  const path = file === ':memory:' ? file : resolve(file)
  if (path !== ':memory:' && !create && !existsSync(path))
    throw new ValidationError(
      `The database file ${path} does not exist: check DATABASE_URL (sqlite:${file}), or create it with \`lectern migrate\``,
    )
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const sqlite = openSqliteConnection(path)
  // A new file gets pages of 8 KiB instead of 4: a page of submissions (rows stored in list order) is
  // then read in half the reads, each a system call. SQLite applies it only to a file without
  // tables, and only before WAL mode is set; an older file keeps its size.
  sqlite.exec(`pragma page_size = ${PAGE_SIZE}`)
  // WAL lets the CLI write while a server reads; busy_timeout makes writers queue instead of failing.
  sqlite.exec('pragma journal_mode = WAL')
  sqlite.exec('pragma busy_timeout = 5000')
  sqlite.exec('pragma foreign_keys = ON')
  sqlite.exec('pragma synchronous = NORMAL')
  let checkpoints: BackgroundCheckpoints | undefined
  if (backgroundCheckpoints && path !== ':memory:') {
    // A serving process checkpoints from a worker thread while it is written (see
    // `sqlite-checkpoints.ts`); its own commits then checkpoint only past a backstop.
    checkpoints = startBackgroundCheckpoints(path, {
      onStart: () => sqlite.exec(`pragma wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`),
      onStop: () => sqlite.exec(`pragma wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`),
    })
  }
  const connection = keepingWriteStatements(sqlite)
  const db = new Kysely<Database>({
    dialect: new TranslatingDialect(new WritingSqliteDialect({ database: connection }), SQLITE_ERROR_CODES),
  })
  return {
    db,
    dialect: 'sqlite',
    description: `sqlite:${path}`,
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    prepare<Row>(query: Compilable<Row>): PreparedQuery<Row> {
      const compiled = query.compile()
      let statement: SqliteArrayStatement | undefined
      return async (values = {}) => {
        try {
          // Prepared on first use, so a query may be defined before its table exists.
          statement ??= sqlite.prepareArrays(compiled.sql)
          return rowObjects(
            statement.columns,
            statement.all(bindValues(compiled.parameters, values)),
          ) as Row[]
        } catch (error) {
          throw translateDatabaseError(error, SQLITE_ERROR_CODES)
        }
      }
    },
    json: {
      joined: (column) => sql<string | null>`group_concat(${sql.ref(column)}, ',')`,
    },
    ping: async () => {
      await sql`select 1`.execute(db)
    },
    close: async () => {
      await checkpoints?.stop()
      await db.destroy()
      // Kysely closes only a connection it has used: one that ran prepared statements alone is
      // closed here.
      connection.close()
    },
  }
}

/**
 * Every transaction Lectern runs writes, and most read first (the row they change, the rule they
 * check). Begun deferred, such a transaction holds only a snapshot until its first write; if another
 * process committed meanwhile, SQLite cannot move it forward and fails the write at once with
 * "database is locked", whatever the busy timeout. Begun immediate, it takes the write lock first,
 * waiting for it under the busy timeout like any single write.
 */
class WritingSqliteDialect extends SqliteDialect {
  constructor(private readonly writingConfig: SqliteDialectConfig) {
    super(writingConfig)
  }

  override createDriver(): Driver {
    return new WritingSqliteDriver(this.writingConfig)
  }
}

class WritingSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'))
  }
}

/** Write statements kept prepared per connection, by SQL text. */
const KEPT_WRITE_STATEMENTS = 64

/**
 * The connection as Kysely sees it, keeping its most recent write statements prepared: Kysely
 * prepares every query it runs anew, and for the importer's multi-row statements (500 rows, up to
 * 8,000 values) SQLite's parsing and planning was a sixth of the import's CPU, for the same few
 * SQL texts over and over. Only statements that return no rows are kept: Kysely runs those to
 * completion at once, whereas a reader may be iterated while the same text is asked for again.
 */
function keepingWriteStatements(sqlite: SqliteConnection): SqliteDatabase {
  const writes = new LRUCache<string, SqliteStatement>({ max: KEPT_WRITE_STATEMENTS })
  let closed = false
  return {
    prepare(text: string) {
      const kept = writes.get(text)
      if (kept !== undefined) return kept
      const statement = sqlite.prepare(text)
      if (!statement.reader) writes.set(text, statement)
      return statement
    },
    // Closed once, whether Kysely or the handle's own `close` comes first.
    close: () => {
      if (closed) return
      closed = true
      writes.clear()
      sqlite.close()
    },
  }
}

/** The triggers that keep content versions and form counts (migration 010), by name. */
const VERSION_TRIGGER = /_(content_version|form_counts)$/

/**
 * Per-row triggers that only note what a bulk write touches, in temporary tables of this
 * connection: which kinds it wrote and which forms' submissions, so that exactly their versions
 * (and those forms' counts) are brought up to date once at the end.
 */
// Written without a conflict clause: inside a trigger, the conflict handling of the statement that
// fired it (an upsert's, say) would replace an `or ignore`.
const note = (table: string, value: string) =>
  `insert into "${table}" select ${value} where not exists (select 1 from "${table}" where "id" = ${value});`
const noteKind = (table: string) =>
  ['insert', 'update', 'delete'].map(
    (operation) => `after ${operation} on "${table}" begin ${note('lectern_bulk_kinds', `'${table}'`)} end`,
  )
const TOUCHED: Record<string, readonly string[]> = {
  forms: [
    ...noteKind('forms'),
    `after insert on "forms" begin ${note('lectern_bulk_forms', 'new."id"')} end`,
    `after delete on "forms" begin ${note('lectern_bulk_forms', 'old."id"')} end`,
    `after update of "id" on "forms" begin
      ${note('lectern_bulk_forms', 'old."id"')} ${note('lectern_bulk_forms', 'new."id"')} end`,
  ],
  pages: noteKind('pages'),
  redirects: noteKind('redirects'),
  submissions: [
    `after insert on "submissions" begin ${note('lectern_bulk_forms', 'new."form_id"')} end`,
    `after delete on "submissions" begin ${note('lectern_bulk_forms', 'old."form_id"')} end`,
    `after update on "submissions" begin
      ${note('lectern_bulk_forms', 'old."form_id"')} ${note('lectern_bulk_forms', 'new."form_id"')} end`,
  ],
}

/**
 * Runs a bulk write (an import) inside `trx` without SQLite's per-row content-version and
 * form-count triggers, moving the version of each kind it wrote once at the end instead, and for
 * each form whose submissions it touched, its version once and its counts recounted: a million-row
 * import would otherwise pay a million extra updates. What it touches is noted by lighter
 * temporary triggers (see {@link TOUCHED}). SQLite DDL is
 * transactional and only one writer holds the database, so no other write can happen while the
 * triggers are lifted, and a rollback restores them. They are recreated from their own stored text.
 */
export async function withSqliteBulkContentWrites<T>(
  trx: Kysely<unknown>,
  tables: readonly string[],
  write: () => Promise<T>,
): Promise<T> {
  const { rows: triggers } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
    where type = 'trigger' and tbl_name in (${sql.join(tables)}) order by name`.execute(trx)
  const lifted = triggers.filter((trigger) => VERSION_TRIGGER.test(trigger.name))
  for (const trigger of lifted) await sql`drop trigger ${sql.id(trigger.name)}`.execute(trx)
  const tracked = tables.filter((table) => TOUCHED[table] !== undefined)
  const temporary: string[] = []
  for (const table of ['lectern_bulk_kinds', 'lectern_bulk_forms']) {
    // Constant names, never built from input.
    await sql`create temp table if not exists ${sql.id(table)} ("id" text primary key)`.execute(trx)
    await sql`delete from temp.${sql.id(table)}`.execute(trx)
  }
  for (const table of tracked)
    for (const [i, body] of (TOUCHED[table] ?? []).entries()) {
      const name = `lectern_bulk_${table}_${i}`
      // Constant text from the table above, never built from input.
      await sql`create temp trigger ${sql.id(name)} ${sql.raw(body)}`.execute(trx)
      temporary.push(name)
    }
  const result = await write()
  for (const name of temporary) await sql`drop trigger temp.${sql.id(name)}`.execute(trx)
  await sql`update content_versions set version = version + 1
    where kind in (select id from temp.lectern_bulk_kinds)`.execute(trx)
  await sql`insert into form_submission_counts (form_id, version, total, unread)
    select touched.id, (select version from content_versions where kind = 'forms'),
      (select count(*) from submissions where submissions.form_id = touched.id),
      (select count(*) from submissions where submissions.form_id = touched.id and submissions.is_read = 0)
    from temp.lectern_bulk_forms as touched where true
    on conflict (form_id) do update
    set version = form_submission_counts.version + 1, total = excluded.total, unread = excluded.unread`.execute(
    trx,
  )
  for (const table of ['lectern_bulk_kinds', 'lectern_bulk_forms'])
    await sql`drop table temp.${sql.id(table)}`.execute(trx)
  // The stored text of each trigger, as its migration created it.
  for (const trigger of lifted) await sql.raw(trigger.sql).execute(trx)
  return result
}

/**
 * Loads many submissions inside `trx` with every secondary index of submissions (the order index
 * and the partial ones of unread and starred submissions) dropped and rebuilt once at the end from
 * its own stored definition: one sort each is much cheaper than keeping them up to date row by row
 * in random order. The primary key's index stays (the upserts need it). Transactional like the
 * trigger lifting above, so a rollback brings the indexes back.
 */
export async function withSqliteSubmissionsIndexRebuilt<T>(
  trx: Kysely<unknown>,
  write: () => Promise<T>,
): Promise<T> {
  // `sql` is null for the indexes of constraints (the primary key), which cannot be dropped.
  const { rows: indexes } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master
    where type = 'index' and tbl_name = 'submissions' and sql is not null order by name`.execute(trx)
  for (const index of indexes) await sql`drop index ${sql.id(index.name)}`.execute(trx)
  const result = await write()
  // The definitions are the schema's own, read back from the database, not input.
  for (const index of indexes) await sql.raw(index.sql).execute(trx)
  return result
}

/** Rows as objects keyed by column name, as the drivers would make them (a later column of one name wins). */
function rowObjects(columns: readonly string[], rows: unknown[][]): Record<string, unknown>[] {
  return rows.map((values) => {
    const row: Record<string, unknown> = {}
    for (let index = 0; index < columns.length; index++) row[columns[index] as string] = values[index]
    return row
  })
}
