import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ValidationError } from '../../errors.js'
import { url } from '../../html.js'
import { type UserFilter, type UserSort, viewUsers } from '../../services/dashboard-lists.js'
import type { Services } from '../../services/index.js'
import type { ListView } from '../../services/listing.js'
import type { Role } from '../../services/roles.js'
import type { UserView } from '../../services/users.js'
import { actorOf } from '../actor.js'
import { answerList } from '../list-view.js'
import { field, pathParam, redirectWithFlash, signedIn } from '../requests.js'
import { sendPage } from '../views/layout.js'
import {
  deleteUserPage,
  lastAdminId,
  newUserPage,
  USER_LIST,
  userCreatedPage,
  usersPage,
} from '../views/users.js'

/** What a role change means for the user's API keys, as the confirmation says it. */
const ROLE_CHANGES: Record<Role, string> = {
  global_admin: 'a global admin: their API keys read forms, submissions, pages and redirects',
  editor: 'an editor: their API keys read forms, pages and redirects, no longer submissions',
  viewer: 'a viewer: their API keys read pages and redirects only',
}

type UserListView = ListView<UserFilter, UserSort>

/** Organization → Users: global admins only. */
export function registerUserRoutes(app: FastifyInstance, services: Services): void {
  const access = { access: 'organization' } as const

  /**
   * Applies a change to the user of the route and says what it did. The services refuse changes that
   * would leave no enabled global admin; that refusal is shown as it is. A user who takes away their
   * own access lands on a page they can still see.
   */
  const change = async (
    request: FastifyRequest,
    reply: FastifyReply,
    apply: (user: UserView) => Promise<string>,
  ) => {
    const session = signedIn(request)
    const user = await services.users.findUser({ id: pathParam(request, 'id') })
    let text: string
    try {
      text = await apply(user)
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      return redirectWithFlash(services.sessions, request, reply, url`/admin/users`, {
        kind: 'error',
        text: error.message,
      })
    }
    const self = user.id === session.user.id
    const after = self ? await services.users.findUser({ id: user.id }).catch(() => undefined) : undefined
    const stillAdmin = !self || (after?.role === 'global_admin' && after.status === 'active')
    return redirectWithFlash(
      services.sessions,
      request,
      reply,
      stillAdmin ? url`/admin/users` : url`/admin`,
      {
        kind: 'success',
        text,
      },
    )
  }

  app.get('/users', { config: access }, async (request, reply) => {
    const [all, keys] = await Promise.all([services.users.listUsers(), services.keys.countKeysByCreator()])
    const list = {
      request,
      reply,
      sessions: services.sessions,
      spec: USER_LIST,
      list: async (view: UserListView) => viewUsers(all, view),
    }
    return answerList(list, ({ view, result, searchProblem }) =>
      usersPage({
        session: signedIn(request),
        view,
        users: result,
        lastAdmin: lastAdminId(all),
        keys,
        searchProblem,
      }),
    )
  })

  app.get('/users/new', { config: access }, async (request, reply) =>
    sendPage(reply, newUserPage({ session: signedIn(request) })),
  )

  app.post('/users', { config: access }, async (request, reply) => {
    const session = signedIn(request)
    const email = field(request, 'email')
    const role = field(request, 'role')
    const password = field(request, 'password')
    try {
      const created = await services.users.createUser(
        { email, role, password: password === '' ? undefined : password },
        actorOf(request),
      )
      return sendPage(reply, userCreatedPage({ session, ...created }), 201)
    } catch (error) {
      if (error instanceof ValidationError)
        return sendPage(reply, newUserPage({ session, email, role, problems: error.problems }), 422)
      throw error
    }
  })

  app.post('/users/:id/role', { config: access }, (request, reply) =>
    change(request, reply, async (user) => {
      const updated = await services.users.setRole({ id: user.id }, field(request, 'role'), actorOf(request))
      if (updated.role === user.role) return `${user.email} already had that role.`
      return `${user.email} is now ${ROLE_CHANGES[updated.role]} from their next request.`
    }),
  )

  app.post('/users/:id/disable', { config: access }, (request, reply) =>
    change(request, reply, async (user) => {
      await services.users.disableUser({ id: user.id }, actorOf(request))
      return `${user.email} is disabled: they are signed out, and their API keys are refused as inactive until you enable them again.`
    }),
  )

  app.post('/users/:id/enable', { config: access }, (request, reply) =>
    change(request, reply, async (user) => {
      await services.users.enableUser({ id: user.id }, actorOf(request))
      return `${user.email} is enabled: they can sign in, and their active API keys work again.`
    }),
  )

  app.get('/users/:id/delete', { config: access }, async (request, reply) => {
    const user = await services.users.findUser({ id: pathParam(request, 'id') })
    const keys = (await services.keys.countKeysByCreator()).get(user.email) ?? { active: 0, total: 0 }
    return sendPage(reply, deleteUserPage({ session: signedIn(request), user, keys }))
  })

  app.post('/users/:id/delete', { config: access }, (request, reply) =>
    change(request, reply, async (user) => {
      await services.users.deleteUser({ id: user.id }, actorOf(request))
      return `${user.email} is deleted, and their API keys are revoked.`
    }),
  )
}
