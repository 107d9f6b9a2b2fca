import { readFileSync } from 'node:fs'
import { Command, CommanderError, InvalidArgumentError } from 'commander'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import { DomainError, type ErrorKind } from '../errors.js'
import { ImportError } from '../services/import/errors.js'
import { registerAuditCommands } from './audit.js'
import { databaseLocation, databaseOfFailure, demoHintOfFailure } from './context.js'
import { runImport } from './import.js'
import { type CliIo, type CliOutput, processIo, writeLine } from './io.js'
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

/** A terminal's width; 80 columns (commander's own default) anywhere else. */
function helpWidth(stream: CliOutput): number {
  return stream.isTTY && stream.columns !== undefined ? stream.columns : 80
}

/** Ends the one line that tells a mistake in the command line. */
const HELP_HINT = '(run with --help for usage)'

/**
 * The whole command tree, writing through `io`. Commander's own messages (help, version, mistakes)
 * go there too, and a mistake throws a `CommanderError` instead of ending the process.
 */
export function buildProgram(io: CliIo = processIo()): Command {
  // Configured before any subcommand is added: each copies its parent's output and exit settings.
  const program = new Command('lectern')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // A mistake is told in one line, like every other failure: commander's "Did you mean …?"
      // and the pointer to --help join the message instead of following it.
      outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, ' ')} ${HELP_HINT}\n`),
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
    })
    .exitOverride()
    .description('Lectern: a read-only content API for forms, submissions, pages and redirects')
    .version(packageVersion(), '-V, --version', 'print the version and exit')

  program
    .command('serve')
    .description('migrate the schema if needed, then serve the API')
    .option('--port <port>', 'TCP port (overrides PORT)', portFlag)
    .option('--host <host>', 'interface to bind (overrides HOST)')
    .action(async (options: { port?: string; host?: string }) => {
      const config = loadConfig(io.env, { PORT: options.port, HOST: options.host })
      const { startServer, closeOnSignals } = await import('../server.js')
      const server = await startServer(config)
      closeOnSignals(server)
    })

  program
    .command('migrate')
    .description('apply pending schema migrations and exit')
    .action(async () => {
      const config = loadConfig(io.env)
      const database = openDatabase(config.DATABASE_URL)
      try {
        const applied = await migrateToLatest(database)
        writeLine(
          io.stdout,
          applied.length === 0 ? 'Schema is up to date' : `Applied migrations: ${applied.join(', ')}`,
        )
        if (applied.length > 0) writeLine(io.stderr, `Wrote to ${databaseLocation(database)}`)
      } finally {
        await database.close()
      }
    })

  program
    .command('demo')
    .description('fresh embedded database with sample content, an admin and an API key (printed), then serve')
    .option('--port <port>', 'TCP port (overrides PORT)', portFlag)
    .option('--host <host>', 'interface to bind (overrides HOST)')
    .action(async (options: { port?: string; host?: string }) =>
      (await import('./demo.js')).runDemo(io, options),
    )

  program
    .command('import')
    .description('import content from a .json or .ndjson file, all or nothing')
    .argument('<file>', 'file.json or file.ndjson')
    .option('--quiet', 'no progress line (one is shown on stderr only when it is a terminal)')
    .action((file: string, options: { quiet?: boolean }) => runImport(io, file, options))

  registerUserCommands(program, io)
  registerKeyCommands(program, io)
  registerRedirectCommands(program, io)
  registerAuditCommands(program, io)
  registerWebhookCommands(program, io)
  return program
}

/**
 * Runs the CLI on `argv` (as `process.argv`: the program and script first) and returns its exit
 * status; every failure ends as one clear line on stderr and a non-zero status. It never ends the
 * process: a command that does not serve has closed everything it opened when this returns.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io)
  try {
    await program.parseAsync(argv)
    return 0
  } catch (error) {
    return reportError(io, error)
  }
}

/** A mistake of the caller, told in one line (plus an import's problems); exit code 1. */
function reportMistake(io: CliIo, error: DomainError): number {
  const database = databaseOfFailure(error)
  // Whatever was not found (a user, a key, an import's form, any global admin) may be in another
  // database: the demo keeps its own.
  const within = error.kind === 'not_found' || error instanceof ImportError
  writeLine(io.stderr, `lectern: ${error.message}${database && within ? ` (database ${database})` : ''}`)
  // An import lists every problem with its location, one per line, after the summary line.
  if (error instanceof ImportError) {
    for (const problem of error.problems) writeLine(io.stderr, `  - ${problem}`)
  }
  // Most likely the reason when a demo runs beside a command on the default database.
  const hint = demoHintOfFailure(error)
  if (hint) writeLine(io.stderr, hint)
  return 1
}

/** What the CLI prints, and its exit code, for each kind of service failure. */
const CLI_ANSWERS: Record<ErrorKind, (io: CliIo, error: DomainError) => number> = {
  invalid: reportMistake,
  not_found: reportMistake,
  unavailable: (io, error) => {
    writeLine(
      io.stderr,
      `lectern: ${error.message}: ${(error.cause as Error | undefined)?.message ?? 'no connection'}`,
    )
    return 2
  },
}

function reportError(io: CliIo, error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (unknown option, missing argument, help); a
    // command's own status without a message (no redirect) is thrown the same way.
    return error.exitCode
  }
  if (error instanceof DomainError) return CLI_ANSWERS[error.kind](io, error)
  const listen = listenFailure(error)
  if (listen) {
    writeLine(io.stderr, `lectern: ${listen}`)
    return 1
  }
  const message = error instanceof Error ? error.message : String(error)
  writeLine(io.stderr, `lectern: unexpected error: ${message.split('\n')[0]}`)
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
