import { type Command, InvalidArgumentError } from 'commander'
import { databaseLocation, printTable, withServices } from './context.js'
import { type CliIo, writeLine } from './io.js'

const DEFAULT_LIMIT = 50

function limitFlag(value: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 10_000)
    throw new InvalidArgumentError('The limit must be an integer from 1 to 10000.')
  return Number(value)
}

/** `lectern audit list`: who did what, newest first. */
export function registerAuditCommands(program: Command, io: CliIo): void {
  const audit = program.command('audit').description('read the audit log')

  audit
    .command('list')
    .description(`who did what, newest first (the last ${DEFAULT_LIMIT} entries unless --limit says)`)
    .option('--json', 'print JSON: an array of { at, actor, action, target, detail }')
    .option('--limit <n>', 'how many entries, 1 to 10000', limitFlag, DEFAULT_LIMIT)
    .action(async (options: { json?: boolean; limit: number }) => {
      await withServices(io, async ({ audit }, database) => {
        const entries = await audit.recent(options.limit)
        if (options.json)
          writeLine(
            io.stdout,
            JSON.stringify(
              entries.map(({ at, actor, action, target, detail }) => ({ at, actor, action, target, detail })),
              null,
              2,
            ),
          )
        else if (entries.length === 0)
          writeLine(io.stdout, `No audit entries in ${databaseLocation(database)}`)
        else
          printTable(
            io,
            entries.map((entry) => ({
              at: entry.at,
              actor: entry.actor,
              action: entry.action,
              target: entry.target,
              detail: entry.detail === null ? null : JSON.stringify(entry.detail),
            })),
            ['at', 'actor', 'action', 'target', 'detail'],
          )
      })
    })
}
