import type { Command } from 'commander'
import { type ApiKeyView, hasExpired } from '../services/keys.js'
import { PERMISSIONS } from '../services/roles.js'
import { databaseLocation, printTable, withServices } from './context.js'
import { type CliIo, writeLine } from './io.js'

/** `lectern keys …`: create (shown once), list, rename, deactivate, activate, revoke. */
export function registerKeyCommands(program: Command, io: CliIo): void {
  const keys = program.command('keys').description('manage API keys')

  keys
    .command('create')
    .description('create an API key; the plain key is printed once, alone on the last line')
    .requiredOption('--name <name>', 'what the key is for')
    .option('--user <email>', 'the global admin who owns the key (optional when there is exactly one)')
    .option('--expires <date-time>', 'when the key stops working: an ISO 8601 date-time in the future')
    .option(
      '--scopes <permissions>',
      `narrow the key to some of its owner's permissions, comma-separated (${PERMISSIONS.join(',')}); default: all`,
    )
    .option(
      '--forms <ids>',
      'narrow submissions:read to these form ids, comma-separated; default: every form',
    )
    .action(
      async (options: { name: string; user?: string; expires?: string; scopes?: string; forms?: string }) => {
        await withServices(
          io,
          async ({ keys }) => {
            const { key, plainKey } = await keys.createApiKey({
              name: options.name,
              userEmail: options.user,
              expiresAt: options.expires,
              scopes: options.scopes?.split(','),
              forms: options.forms?.split(','),
            })
            const expiry = key.expiresAt === null ? '' : `, expires ${key.expiresAt}`
            writeLine(
              io.stdout,
              `Created API key ${key.id} '${key.name}' for ${key.createdBy} (prefix ${key.prefix}${expiry})`,
            )
            if (key.scopes !== null || key.forms !== null)
              writeLine(io.stdout, `It may: ${describeScope(key)}`)
            writeLine(io.stdout, 'Store it now: it is not stored and cannot be shown again.')
            writeLine(io.stdout, plainKey)
          },
          { writes: true },
        )
      },
    )

  keys
    .command('list')
    .description('list API keys (never the keys themselves)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      await withServices(io, async ({ keys }, database) => {
        const list = await keys.listApiKeys()
        if (options.json) writeLine(io.stdout, JSON.stringify(list, null, 2))
        // An empty table gives no hint that the command may have opened the wrong database.
        else if (list.length === 0) writeLine(io.stdout, `No API keys in ${databaseLocation(database)}`)
        else
          printTable(
            io,
            list.map((key) => ({
              ...key,
              // The status the API answers with, and why a key that is not revoked does not work.
              status: key.statusReason === null ? key.status : `${key.status} (${key.statusReason})`,
              deactivated: null,
              statusReason: null,
              expiresAt:
                key.expiresAt !== null && hasExpired(key) ? `${key.expiresAt} (expired)` : key.expiresAt,
              scopes: key.scopes === null ? 'all' : key.scopes.join(','),
              forms: key.forms === null ? 'all' : key.forms.join(','),
            })),
            [
              'id',
              'name',
              'prefix',
              'status',
              'scopes',
              'forms',
              'createdBy',
              'createdAt',
              'lastUsedAt',
              'expiresAt',
            ],
          )
      })
    })

  keys
    .command('rename')
    .description('give a key a new name (what it is for); the key itself does not change')
    .argument('<id>', 'key id, as shown by keys list')
    .argument('<name>', 'the new name')
    .action(async (id: string, name: string) => {
      await withServices(
        io,
        async ({ keys }) => {
          const key = await keys.renameApiKey(id, name)
          writeLine(io.stdout, `Renamed ${key.id} to '${key.name}'`)
        },
        { writes: true },
      )
    })

  const change = (name: 'deactivate' | 'activate' | 'revoke', description: string, done: string) =>
    keys
      .command(name)
      .description(description)
      .argument('<id>', 'key id, as shown by keys list')
      .action(async (id: string) => {
        await withServices(
          io,
          async ({ keys }) => {
            if (name === 'deactivate') await keys.deactivateApiKey(id)
            else if (name === 'activate') await keys.activateApiKey(id)
            else await keys.revokeApiKey(id)
            writeLine(io.stdout, `${done} ${id}`)
          },
          { writes: true },
        )
      })

  change(
    'deactivate',
    'stop a key working until it is activated again (effective on the next request)',
    'Deactivated',
  )
  change('activate', 'let a deactivated key work again', 'Activated')
  change('revoke', 'invalidate a key for good (effective on the next request)', 'Revoked')
}

/** What a narrowed key may read, in one line: its scopes (or all of its owner's) and its forms. */
function describeScope(key: Pick<ApiKeyView, 'scopes' | 'forms'>): string {
  const scopes = key.scopes === null ? "all of its owner's permissions" : key.scopes.join(', ')
  return key.forms === null ? scopes : `${scopes}; submissions of ${key.forms.join(', ')} only`
}
