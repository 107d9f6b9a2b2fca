import type { Command } from 'commander'
import { ValidationError } from '../errors.js'
import { databaseLocation, printTable, withServices } from './context.js'
import { type CliIo, writeLine } from './io.js'

/** `lectern users …`: create users, change roles and passwords, disable, enable, delete, unlock sign-ins, list. */
export function registerUserCommands(program: Command, io: CliIo): void {
  const users = program.command('users').description('manage dashboard users and their roles')

  users
    .command('create')
    .description('create a user; the password is read from stdin when piped, otherwise generated and printed')
    .requiredOption('--email <email>', 'email address (the login name)')
    .requiredOption('--role <role>', 'global_admin, editor or viewer')
    .action(async (options: { email: string; role: string }) => {
      const piped = (await io.readStdin())?.replace(/\r?\n$/, '')
      await withServices(
        io,
        async ({ users }) => {
          const { user, generatedPassword } = await users.createUser({
            email: options.email,
            role: options.role,
            password: piped === undefined || piped === '' ? undefined : piped,
          })
          writeLine(io.stdout, `Created ${user.role} ${user.email} (${user.id})`)
          if (generatedPassword) writeLine(io.stdout, `Password (shown once): ${generatedPassword}`)
        },
        { writes: true },
      )
    })

  users
    .command('set-role')
    .description("change a user's role; their API keys follow at once")
    .argument('<email>')
    .argument('<role>', 'global_admin, editor or viewer')
    .action(async (email: string, role: string) => {
      await withServices(
        io,
        async ({ users }) => {
          const user = await users.setRole(email, role)
          writeLine(io.stdout, `${user.email} is now ${user.role}`)
        },
        { writes: true },
      )
    })

  users
    .command('disable')
    .description('disable a user; their API keys stop working at once')
    .argument('<email>')
    .action(async (email: string) => {
      await withServices(
        io,
        async ({ users }) => {
          const user = await users.disableUser(email)
          writeLine(io.stdout, `Disabled ${user.email}`)
        },
        { writes: true },
      )
    })

  users
    .command('enable')
    .description('enable a disabled user')
    .argument('<email>')
    .action(async (email: string) => {
      await withServices(
        io,
        async ({ users }) => {
          const user = await users.enableUser(email)
          writeLine(io.stdout, `Enabled ${user.email}`)
        },
        { writes: true },
      )
    })

  users
    .command('delete')
    .description('delete a user; their API keys are revoked')
    .argument('<email>')
    .action(async (email: string) => {
      await withServices(
        io,
        async ({ users }) => {
          await users.deleteUser(email)
          writeLine(io.stdout, `Deleted ${email}`)
        },
        { writes: true },
      )
    })

  users
    .command('set-password')
    .description(
      "set a user's password, read from stdin (at least 12 characters); their dashboard sessions end",
    )
    .argument('<email>')
    .action(async (email: string) => {
      const piped = (await io.readStdin())?.replace(/\r?\n$/, '')
      // Never from an argument (it would stay in the shell history) nor generated here.
      if (piped === undefined || piped === '')
        throw new ValidationError(
          'Pipe the new password on stdin, e.g. `printf %s "$PASSWORD" | lectern users set-password ada@example.com`',
        )
      await withServices(
        io,
        async ({ users }) => {
          const { user, sessionsEnded } = await users.setPassword(email, piped)
          writeLine(
            io.stdout,
            `Password changed for ${user.email}; ${sessionsEnded} dashboard session${sessionsEnded === 1 ? '' : 's'} ended`,
          )
        },
        { writes: true },
      )
    })

  users
    .command('unlock')
    .description(
      "clear a user's sign-in throttle: the failed attempts recorded for the email, from every address",
    )
    .argument('<email>')
    .action(async (email: string) => {
      await withServices(
        io,
        async ({ sessions }) => {
          const cleared = await sessions.clearSignInFailures(email)
          writeLine(
            io.stdout,
            `Cleared the sign-in throttle of ${email.trim().toLowerCase()} (${cleared} failed attempt${cleared === 1 ? '' : 's'})`,
          )
        },
        { writes: true },
      )
    })

  users
    .command('list')
    .description('list users')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      await withServices(io, async ({ users }, database) => {
        const list = await users.listUsers()
        if (options.json) writeLine(io.stdout, JSON.stringify(list, null, 2))
        else if (list.length === 0) writeLine(io.stdout, `No users in ${databaseLocation(database)}`)
        else
          printTable(io, list as unknown as Record<string, string>[], [
            'email',
            'role',
            'status',
            'createdAt',
            'id',
          ])
      })
    })
}
