import { Command, CommanderError } from 'commander'
import { loadConfig } from '../config.js'
import { migrateToLatest, openDatabase } from '../db/client.js'
import { NotFoundError, UnavailableError, ValidationError } from '../errors.js'
import { closeOnSignals, startServer } from '../server.js'
import { ImportError } from '../services/import/errors.js'
import { runDemo } from './demo.js'
import { runImport } from './import.js'
import { registerKeyCommands } from './keys.js'
import { registerRedirectCommands } from './redirects.js'
import { registerUserCommands } from './users.js'

/** Parses a `--port` flag strictly; `loadConfig` then range-checks it with the env settings. */
const portFlag = (value: string) => value

export function buildProgram(): Command {
  const program = new Command('lectern')
    .description('Lectern: a read-only content API for forms, submissions, pages and redirects')
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
    .action(runImport)

  registerUserCommands(program)
  registerKeyCommands(program)
  registerRedirectCommands(program)
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

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (unknown option, missing argument, help).
    return error.exitCode
  }
  if (error instanceof ValidationError || error instanceof NotFoundError) {
    console.error(`lectern: ${error.message}`)
    // An import lists every problem with its location, one per line, after the summary line.
    if (error instanceof ImportError) {
      for (const problem of error.problems) console.error(`  - ${problem}`)
    }
    return 1
  }
  if (error instanceof UnavailableError) {
    console.error(
      `lectern: ${error.message}: ${(error.cause as Error | undefined)?.message ?? 'no connection'}`,
    )
    return 2
  }
  const message = error instanceof Error ? error.message : String(error)
  console.error(`lectern: unexpected error: ${message.split('\n')[0]}`)
  return 1
}
