import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { openDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { randomBase62 } from '../src/ids.js'

/**
 * Migrated databases for tests, copied from a template instead of migrated one by one: running every
 * migration costs a PostgreSQL test 1.5–2.5 s and a SQLite test 0.1–0.4 s, a copy a tenth of that.
 * The template's name carries a hash of the migrations' source, so a changed migration makes a new
 * template and two checkouts tested side by side never share one.
 */

const MIGRATIONS_DIR = join(import.meta.dirname, '..', 'src', 'db', 'migrations')

/**
 * How long creating or dropping a test database may take. Both wait for the disk (a copy of the
 * template, a forced checkpoint), which on a slow or busy virtual machine takes seconds: the
 * request path's 3 s would fail a test on the machine's time, not on anything it tests.
 */
const ADMIN_STATEMENT_TIMEOUT_MS = 60_000

function migrationsHash(): string {
  const hash = createHash('sha256')
  for (const name of readdirSync(MIGRATIONS_DIR).sort()) {
    hash
      .update(name)
      .update('\0')
      .update(readFileSync(join(MIGRATIONS_DIR, name)))
      .update('\0')
  }
  return hash.digest('hex').slice(0, 16)
}

/** A migrated SQLite file for `target`: the template is made once per migrations hash, then copied. */
export async function copyMigratedSqlite(target: string): Promise<void> {
  const dir = join(tmpdir(), 'lectern-test-templates')
  const template = join(dir, `${migrationsHash()}.db`)
  if (!existsSync(template)) {
    mkdirSync(dir, { recursive: true })
    // Built under a name of its own and renamed into place, so a concurrent worker never copies a
    // half-migrated file.
    const building = `${template}.${process.pid}.${randomBase62(6)}`
    const handle = openDatabase(`sqlite:${building}`)
    await migrateToLatest(handle)
    await handle.close()
    renameSync(building, template)
    rmSync(`${building}-wal`, { force: true })
    rmSync(`${building}-shm`, { force: true })
  }
  copyFileSync(template, target)
}

/**
 * A new PostgreSQL database created from a migrated template database; returns its name.
 * `CREATE DATABASE … TEMPLATE` needs nobody connected to the template, so it is only ever connected
 * to while it is built, under an advisory lock every test process takes.
 */
export async function createMigratedPostgres(adminUrl: string): Promise<string> {
  const template = `lectern_test_template_${migrationsHash()}`
  const name = `lectern_test_${randomBase62(12).toLowerCase()}`
  const admin = openDatabase(adminUrl, { statementTimeoutMs: ADMIN_STATEMENT_TIMEOUT_MS })
  try {
    await admin.db.connection().execute(async (db) => {
      await sql`select pg_advisory_lock(hashtext(${template}))`.execute(db)
      try {
        const found = await sql`select 1 from pg_database where datname = ${template}`.execute(db)
        if (found.rows.length === 0) {
          const building = `${template}_${randomBase62(6).toLowerCase()}`
          await sql`create database ${sql.id(building)}`.execute(db)
          const handle = openDatabase(urlOfDatabase(adminUrl, building))
          await migrateToLatest(handle)
          await handle.close()
          await sql`alter database ${sql.id(building)} rename to ${sql.id(template)}`.execute(db)
        }
        await sql`create database ${sql.id(name)} template ${sql.id(template)}`.execute(db)
      } finally {
        await sql`select pg_advisory_unlock(hashtext(${template}))`.execute(db)
      }
    })
  } finally {
    await admin.close()
  }
  return name
}

/** Removes a database made by `createMigratedPostgres`, closing any connection a test left open. */
export async function dropPostgresDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = openDatabase(adminUrl, { statementTimeoutMs: ADMIN_STATEMENT_TIMEOUT_MS })
  try {
    await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db)
  } finally {
    await admin.close()
  }
}

export function urlOfDatabase(baseUrl: string, database: string): string {
  const url = new URL(baseUrl)
  url.pathname = `/${database}`
  return url.toString()
}
