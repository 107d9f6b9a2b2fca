import { resolve } from 'node:path'
import { type Config, loadConfig } from '../config.js'
import {
  BULK_STATEMENT_TIMEOUT_MS,
  type DatabaseHandle,
  type OpenOptions,
  openDatabase,
} from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import { createServices, type Services } from '../services/index.js'
import { runningDemo, shellWord } from './demo-lock.js'
import { type CliIo, writeLine } from './io.js'

/**
 * Runs `work` with migrated services on the configured database and always closes it, so a
 * command never leaves a connection or a lock behind. A SQLite file that does not exist is not
 * created unless `options.create` says so (only `serve`, `migrate`, `demo` and `import` make one):
 * a mistyped DATABASE_URL is reported, not answered from a new empty database.
 */
export async function withServices<T>(
  io: CliIo,
  work: (services: Services, database: DatabaseHandle, config: Config) => Promise<T>,
  options: Pick<OpenOptions, 'create'> & {
    /** The command only loads data (`import`): its bulk statements may run for minutes. */
    bulk?: boolean
    /**
     * The command changes the database: once it has, stderr names the database (stdout stays the
     * command's output, e.g. a new key alone on its last line).
     */
    writes?: boolean
  } = {},
): Promise<T> {
  const config = loadConfig(io.env)
  const { writes, bulk, create = false } = options
  let database: DatabaseHandle
  try {
    database = openDatabase(config.DATABASE_URL, {
      create,
      ...(bulk ? { statementTimeoutMs: BULK_STATEMENT_TIMEOUT_MS } : {}),
    })
  } catch (error) {
    noteRunningDemo(io.env, error)
    throw error
  }
  try {
    await migrateToLatest(database)
    const result = await work(
      createServices(database, {
        notifications: {
          secretKey: config.SECRET_KEY,
          allowPrivate: config.WEBHOOK_ALLOW_PRIVATE === 'true',
        },
      }),
      database,
      config,
    )
    if (writes) writeLine(io.stderr, `Wrote to ${databaseLocation(database)}`)
    const hint = demoHint(io.env)
    if (hint) writeLine(io.stderr, hint)
    return result
  } catch (error) {
    // "Not found" often means "wrong database" (the demo keeps its own): the report names it.
    if (error instanceof Error) failedIn.set(error, databaseLocation(database))
    noteRunningDemo(io.env, error)
    throw error
  } finally {
    await database.close()
  }
}

/**
 * When the CLI works on its default database next to a running `lectern demo` (started in this
 * directory), a line saying that the demo serves another database and how to reach it: a key
 * created here would be refused by the demo's server.
 */
export function demoHint(env: NodeJS.ProcessEnv): string | undefined {
  if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== '') return undefined
  const demo = runningDemo()
  if (!demo) return undefined
  return `Note: the demo running here (process ${demo.pid}) serves another database; to work on its data: export DATABASE_URL=${shellWord(`sqlite:${demo.file}`)}`
}

const failedIn = new WeakMap<Error, string>()
const demoHints = new WeakMap<Error, string>()

function noteRunningDemo(env: NodeJS.ProcessEnv, error: unknown): void {
  const hint = demoHint(env)
  if (hint && error instanceof Error) demoHints.set(error, hint)
}

/** The `demoHint` of a command on the database that failed with `error`, if there was one. */
export function demoHintOfFailure(error: unknown): string | undefined {
  return error instanceof Error ? demoHints.get(error) : undefined
}

/** The database a command was working on when it threw `error`, if it had opened one. */
export function databaseOfFailure(error: unknown): string | undefined {
  return error instanceof Error ? failedIn.get(error) : undefined
}

/**
 * Where a database lives, as a user can find it again: a SQLite file as an absolute path (the
 * default `./data/lectern.db` depends on the directory the command ran in).
 */
export function databaseLocation(database: DatabaseHandle): string {
  const file = database.description.startsWith('sqlite:') ? database.description.slice(7) : undefined
  return file && file !== ':memory:' ? `sqlite:${resolve(file)}` : database.description
}

/** Prints rows as an aligned plain-text table on stdout. */
export function printTable(io: CliIo, rows: Record<string, string | null>[], columns: string[]): void {
  const cell = (value: string | null | undefined) => value ?? '-'
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd()
  writeLine(io.stdout, line(columns))
  for (const row of rows) writeLine(io.stdout, line(columns.map((c) => cell(row[c]))))
}
