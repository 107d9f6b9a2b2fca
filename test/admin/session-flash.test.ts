import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from '../harness.js'

describe('a session’s one-time message', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await createTestContext()
  })
  afterEach(() => ctx.close())

  const signedInSession = async () => {
    await ctx.services.users.createUser({ email: 'ada@example.com', role: 'global_admin' })
    await ctx.services.users.setPassword('ada@example.com', 'a long enough passphrase')
    const session = await ctx.services.sessions.signIn({
      email: 'ada@example.com',
      password: 'a long enough passphrase',
      ip: '127.0.0.1',
    })
    if (session.status !== 'signed_in') throw new Error(`sign-in failed: ${session.status}`)
    return session.token
  }

  it('is shown by exactly one of several pages of the session asked for at once', async () => {
    const token = await signedInSession()
    for (let round = 0; round < 5; round++) {
      const signedIn = await ctx.services.sessions.authenticate(token)
      if (!signedIn) throw new Error('the session was refused')
      await ctx.services.sessions.setFlash(signedIn.id, { kind: 'success', text: `Imported: round ${round}` })
      const sessions = await Promise.all(
        Array.from({ length: 4 }, () => ctx.services.sessions.authenticate(token)),
      )
      const shown = sessions.map((session) => session?.flash?.text).filter((text) => text !== undefined)
      expect(shown).toEqual([`Imported: round ${round}`])
    }
  })

  it('is shown once, then gone', async () => {
    const token = await signedInSession()
    const signedIn = await ctx.services.sessions.authenticate(token)
    if (!signedIn) throw new Error('the session was refused')
    await ctx.services.sessions.setFlash(signedIn.id, { kind: 'error', text: 'Something went wrong' })
    expect((await ctx.services.sessions.authenticate(token))?.flash).toEqual({
      kind: 'error',
      text: 'Something went wrong',
    })
    expect((await ctx.services.sessions.authenticate(token))?.flash).toBeNull()
  })
})
