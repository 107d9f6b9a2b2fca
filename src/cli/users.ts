import type { Command } from 'commander'
import { ValidationError } from '../errors.js'
import { databaseLocation, printTable, readPipedStdin, withServices } from './context.js'

/** `lectern users …`: create users, change roles and passwords, disable, enable, delete, unlock sign-ins, list. */
export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('manage dashboard users and their roles')

  users
    .command('create')
    .description('create a user; the password is read from stdin when piped, otherwise generated and printed')
    .requiredOption('--email <email>', 'email address (the login name)')
    .requiredOption('--role <role>', 'global_admin, editor or viewer')
    .action(async (options: { email: string; role: string }) => {
      const piped = (await readPipedStdin())?.replace(/\r?\n$/, '')
      await withServices(
        async ({ users }) => {
          const { user, generatedPassword } = await users.createUser({
            email: options.email,
            role: options.role,
            password: piped === undefined || piped === '' ? undefined : piped,
          })
          console.log(`Created ${user.role} ${user.email} (${user.id})`)
          if (generatedPassword) console.log(`Password (shown once): ${generatedPassword}`)
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
        async ({ users }) => {
          const user = await users.setRole(email, role)
          console.log(`${user.email} is now ${user.role}`)
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
        async ({ users }) => {
          const user = await users.disableUser(email)
          console.log(`Disabled ${user.email}`)
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
        async ({ users }) => {
          const user = await users.enableUser(email)
          console.log(`Enabled ${user.email}`)
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
        async ({ users }) => {
          await users.deleteUser(email)
          console.log(`Deleted ${email}`)
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
      const piped = (await readPipedStdin())?.replace(/\r?\n$/, '')
      // Never from an argument (it would stay in the shell history) nor generated here.
      if (piped === undefined || piped === '')
        throw new ValidationError(
          'Pipe the new password on stdin, e.g. `printf %s "$PASSWORD" | lectern users set-password ada@example.com`',
        )
      await withServices(
        async ({ users }) => {
          const { user, sessionsEnded } = await users.setPassword(email, piped)
          console.log(
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
        async ({ sessions }) => {
          const cleared = await sessions.clearSignInFailures(email)
          console.log(
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
      await withServices(async ({ users }, database) => {
        const list = await users.listUsers()
        if (options.json) console.log(JSON.stringify(list, null, 2))
        else if (list.length === 0) console.log(`No users in ${databaseLocation(database)}`)
        else
          printTable(list as unknown as Record<string, string>[], [
            'email',
            'role',
            'status',
            'createdAt',
            'id',
          ])
      })
    })
}
