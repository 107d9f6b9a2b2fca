import type { FastifyInstance } from 'fastify'
import { ValidationError } from '../../errors.js'
import { url } from '../../html.js'
import type { Services } from '../../services/index.js'
import { actorOf } from '../actor.js'
import { field, pathParam, redirectWithFlash, seeOther, signedIn } from '../requests.js'
import { clearSessionCookie, setSessionCookie } from '../security.js'
import { accountPage, passwordResetPage, resetPasswordPage } from '../views/account.js'
import { sendPage } from '../views/layout.js'

/** Your account (changing your own password), and a global admin resetting someone else's. */
export function registerAccountRoutes(app: FastifyInstance, services: Services): void {
  app.get('/account', { config: { access: 'signed-in' } }, async (request, reply) =>
    sendPage(reply, accountPage({ session: signedIn(request) })),
  )

  app.post('/account/password', { config: { access: 'signed-in' } }, async (request, reply) => {
    const session = signedIn(request)
    const password = field(request, 'password')
    const refuse = (problem: string) => sendPage(reply, accountPage({ session, problems: [problem] }), 422)
    if (password !== field(request, 'confirm')) return refuse('The two new passwords are not the same')
    const check = await services.sessions.checkCurrentPassword(session, field(request, 'current'), request.ip)
    switch (check.status) {
      case 'wrong':
        return refuse('The current password is not right')
      case 'busy':
        reply.header('Retry-After', String(check.retryAfterSeconds))
        return sendPage(
          reply,
          accountPage({
            session,
            problems: [
              'Your current password is still being checked, or too many are right now. Please try again in a few seconds.',
            ],
          }),
          503,
        )
      case 'signed_out':
        clearSessionCookie(request, reply)
        return seeOther(reply, url`/admin/login?notice=password-checks`)
      case 'right':
        break
    }
    try {
      await services.users.setPassword({ id: session.user.id }, password, actorOf(request))
    } catch (error) {
      if (error instanceof ValidationError) return refuse(error.message)
      throw error
    }
    // Every session ended with the change, this one too; this browser gets a new one, as at sign-in.
    const again = await services.sessions.signIn({ email: session.user.email, password, ip: request.ip })
    if (again.status !== 'signed_in') return seeOther(reply, url`/admin/login`)
    setSessionCookie(request, reply, again.token)
    await services.sessions.setFlash(again.session.id, {
      kind: 'success',
      text: 'Your password is changed. Every other session you had open has ended.',
    })
    return seeOther(reply, url`/admin/account`)
  })

  const organization = { access: 'organization' } as const

  app.get('/users/:id/password', { config: organization }, async (request, reply) => {
    const session = signedIn(request)
    const user = await services.users.findUser({ id: pathParam(request, 'id') })
    if (user.id === session.user.id) return seeOther(reply, url`/admin/account`)
    return sendPage(reply, resetPasswordPage({ session, user }))
  })

  app.post('/users/:id/password', { config: organization }, async (request, reply) => {
    const session = signedIn(request)
    const user = await services.users.findUser({ id: pathParam(request, 'id') })
    if (user.id === session.user.id)
      return redirectWithFlash(services.sessions, request, reply, url`/admin/account`, {
        kind: 'error',
        text: 'Change your own password here: it needs your current one.',
      })
    const reset = await services.users.setPassword({ id: user.id }, undefined, actorOf(request))
    return sendPage(
      reply,
      passwordResetPage({
        session,
        user,
        password: reset.generatedPassword as string,
        sessionsEnded: reset.sessionsEnded,
      }),
    )
  })
}
