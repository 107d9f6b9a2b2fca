import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'
import { runCli } from './run-cli.js'

describe('lectern users set-password', () => {
  let ctx: TestContext
  const cli = (args: string[], input?: string) => runCli(args, { databaseUrl: ctx.databaseUrl, input })

  beforeEach(async () => {
    ctx = await createTestContext()
  })
  afterEach(() => ctx.close())

  it('sets the password piped on stdin, ends the user’s sessions and records it as the command line', async () => {
    const { user } = await ctx.services.users.createUser({ email: 'ada@example.com', role: 'editor' })
    const signedIn = await ctx.services.sessions.signIn({
      email: 'ada@example.com',
      password: 'an old password here',
      ip: '127.0.0.1',
    })
    expect(signedIn.status).toBe('invalid')
    await ctx.services.users.setPassword('ada@example.com', 'an old password here')
    const session = await ctx.services.sessions.signIn({
      email: 'ada@example.com',
      password: 'an old password here',
      ip: '127.0.0.1',
    })
    if (session.status !== 'signed_in') throw new Error(`sign-in failed: ${session.status}`)

    const res = await cli(['users', 'set-password', 'Ada@Example.com'], 'a new long passphrase\n')
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toContain('Password changed for ada@example.com; 1 dashboard session ended')
    expect(res.stdout).not.toContain('a new long passphrase')
    expect(await ctx.services.sessions.authenticate(session.token)).toBeNull()
    expect(await ctx.services.users.checkPassword('ada@example.com', 'a new long passphrase')).toBe(true)
    expect(await ctx.services.users.checkPassword({ id: user.id }, 'an old password here')).toBe(false)

    const [entry] = await ctx.services.audit.recent(1)
    expect(entry).toMatchObject({
      actor: 'cli',
      action: 'user.password_changed',
      target: 'ada@example.com',
      detail: { how: 'set', sessionsEnded: 1 },
    })
  })

  it('refuses a password under 12 characters, nothing piped, or an unknown user, with one line and no change', async () => {
    await ctx.services.users.createUser({
      email: 'ada@example.com',
      role: 'editor',
      password: 'the first password',
    })
    const short = await cli(['users', 'set-password', 'ada@example.com'], 'too short\n')
    expect(short.code).toBe(1)
    expect(short.stderr.trim()).toBe('lectern: Password must be at least 12 characters')

    const nothing = await cli(['users', 'set-password', 'ada@example.com'], '')
    expect(nothing.code).toBe(1)
    expect(nothing.stderr).toContain('Pipe the new password on stdin')

    const unknown = await cli(['users', 'set-password', 'nobody@example.com'], 'a long enough password\n')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("User 'nobody@example.com' not found")

    expect(await ctx.services.users.checkPassword('ada@example.com', 'the first password')).toBe(true)
    expect((await ctx.services.audit.recent(10)).map((entry) => entry.action)).not.toContain(
      'user.password_changed',
    )
  })
})
