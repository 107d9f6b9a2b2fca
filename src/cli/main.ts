import { readFileSync } from 'node:fs'
import { Command, CommanderError, InvalidArgumentError } from 'commander'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import { DomainError, type ErrorKind } from '../errors.js'
import { closeOnSignals, startServer } from '../server.js'
import { ImportError } from '../services/import/errors.js'
import { registerAuditCommands } from './audit.js'
import { databaseLocation, databaseOfFailure, demoHintOfFailure } from './context.js'
import { runDemo } from './demo.js'
import { runImport } from './import.js'
import { registerKeyCommands } from './keys.js'
import { registerRedirectCommands } from './redirects.js'
import { registerUserCommands } from './users.js'
import { registerWebhookCommands } from './webhooks.js'

/**
 * Parses a `--port` flag strictly, so that a bad value is reported against the flag the user typed
 * (commander names it) rather than as the PORT setting it overrides.
 */
function portFlag(value: string): string {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535)
    throw new InvalidArgumentError('Port must be an integer from 1 to 65535.')
  return value
}

/** The version in package.json, which sits two levels above this file in `src/` and in `dist/`. */
function packageVersion(): string {
  const file = new URL('../../package.json', import.meta.url)
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version
}

export function buildProgram(): Command {
  const program = new Command('lectern')
    .description('Lectern: a read-only content API for forms, submissions, pages and redirects')
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()

  program
    .command('serve')
    .description('migrate the schema if needed, then serve the API')
    .option('--port <port>', 'TCP port (overrides PORT)', portFlag)
    .option('--host <host>', 'interface to bind (overrides HOST)')
    .action(async (options: { port?: string; host?: string }) => {
      const config = loadConfig(process.env, { PORT: options.port, HOST: options.host })
      const server = await startServer(config)
      closeOnSignals(server)
    })

  program
    .command('migrate')
    .description('apply pending schema migrations and exit')
    .action(async () => {
      const config = loadConfig()
      const database = openDatabase(config.DATABASE_URL)
      try {
        const applied = await migrateToLatest(database)
        console.log(
          applied.length === 0 ? 'Schema is up to date' : `Applied migrations: ${applied.join(', ')}`,
        )
        if (applied.length > 0) console.error(`Wrote to ${databaseLocation(database)}`)
      } finally {
        await database.close()
      }
    })

  program
    .command('demo')
    .description('fresh embedded database with sample content, an admin and an API key (printed), then serve')
    .option('--port <port>', 'TCP port (overrides PORT)', portFlag)
    .option('--host <host>', 'interface to bind (overrides HOST)')
    .action(runDemo)

  program
    .command('import')
    .description('import content from a .json or .ndjson file, all or nothing')
    .argument('<file>', 'file.json or file.ndjson')
    .option('--quiet', 'no progress line (one is shown on stderr only when it is a terminal)')
    .action((file: string, options: { quiet?: boolean }) => runImport(file, options))

  registerUserCommands(program)
  registerKeyCommands(program)
  registerRedirectCommands(program)
  registerAuditCommands(program)
  registerWebhookCommands(program)
  return program
}

/** Runs the CLI; every failure ends as one clear line on stderr and a non-zero exit status. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram()
  try {
    await program.parseAsync(argv)
  } catch (error) {
    process.exitCode = reportError(error)
  }
}

/** A mistake of the caller, told in one line (plus an import's problems); exit code 1. */
function reportMistake(error: DomainError): number {
  const database = databaseOfFailure(error)
  // Whatever was not found (a user, a key, an import's form, any global admin) may be in another
  // database: the demo keeps its own.
  const within = error.kind === 'not_found' || error instanceof ImportError
  console.error(`lectern: ${error.message}${database && within ? ` (database ${database})` : ''}`)
  // An import lists every problem with its location, one per line, after the summary line.
  if (error instanceof ImportError) {
    for (const problem of error.problems) console.error(`  - ${problem}`)
  }
  // Most likely the reason when a demo runs beside a command on the default database.
  const hint = demoHintOfFailure(error)
  if (hint) console.error(hint)
  return 1
}

/** What the CLI prints, and its exit code, for each kind of service failure. */
const CLI_ANSWERS: Record<ErrorKind, (error: DomainError) => number> = {
  invalid: reportMistake,
  not_found: reportMistake,
  unavailable: (error) => {
    console.error(
      `lectern: ${error.message}: ${(error.cause as Error | undefined)?.message ?? 'no connection'}`,
    )
    return 2
  },
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (unknown option, missing argument, help).
    return error.exitCode
  }
  if (error instanceof DomainError) return CLI_ANSWERS[error.kind](error)
  const listen = listenFailure(error)
  if (listen) {
    console.error(`lectern: ${listen}`)
    return 1
  }
  const message = error instanceof Error ? error.message : String(error)
  console.error(`lectern: unexpected error: ${message.split('\n')[0]}`)
  return 1
}

/** A sentence for the errors `listen` gives when the address cannot be taken, else undefined. */
export function listenFailure(error: unknown): string | undefined {
  const { code, address, port } = (error ?? {}) as { code?: string; address?: string; port?: number }
  const where = address && port ? `${address}:${port}` : 'the address'
  if (code === 'EADDRINUSE')
    return `cannot listen on ${where}: the port is already in use (is Lectern already running there?); choose another with --port N or PORT`
  if (code === 'EACCES')
    return `cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose another with --port N or PORT`
  if (code === 'EADDRNOTAVAIL')
    return `cannot listen on ${where}: this machine has no such address; check --host or HOST`
  return undefined
}
