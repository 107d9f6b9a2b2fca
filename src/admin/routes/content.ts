import type { FastifyInstance } from 'fastify'
import type { Services } from '../../services/index.js'
import { canManageContent, roleAllows } from '../../services/roles.js'
import { actorOf } from '../actor.js'
import { url } from '../html.js'
import {
  flag,
  pageRedirect,
  paging,
  pathParam,
  redirectWithFlash,
  returnPage,
  signedIn,
} from '../requests.js'
import { formsPage, pagesPage } from '../views/content.js'
import { sendPage } from '../views/layout.js'

/** Forms and pages (a form's submissions have `submissions.ts`). */
export function registerContentRoutes(app: FastifyInstance, services: Services): void {
  const done = redirectWithFlash.bind(null, services.sessions)

  app.get('/forms', { config: { access: { read: 'forms:read' } } }, async (request, reply) => {
    const session = signedIn(request)
    const options = paging(request)
    const forms = await services.contentAdmin.listForms(options)
    const elsewhere = pageRedirect(request, forms.total, (page) => url`/admin/forms?page=${page}`)
    if (elsewhere) return done(request, reply, elsewhere.url, elsewhere.flash)
    return sendPage(
      reply,
      formsPage({
        session,
        forms: { ...forms, ...options },
        showSubmissions: roleAllows(session.user.role, 'submissions:read'),
        canManage: canManageContent(session.user.role, 'forms:read'),
      }),
    )
  })

  app.post('/forms/:id/active', { config: { access: { manage: 'forms:read' } } }, async (request, reply) => {
    const form = await services.contentAdmin.setFormActive(
      pathParam(request, 'id'),
      flag(request, 'active'),
      actorOf(request),
    )
    return done(request, reply, url`/admin/forms?page=${returnPage(request)}#form-${form.id}`, {
      kind: 'success',
      text: `“${form.title}” is ${form.isActive ? 'active' : 'inactive'}.`,
    })
  })

  app.get('/pages', { config: { access: { read: 'pages:read' } } }, async (request, reply) => {
    const session = signedIn(request)
    const options = paging(request)
    const pages = await services.content.listPages(options)
    const elsewhere = pageRedirect(request, pages.total, (page) => url`/admin/pages?page=${page}`)
    if (elsewhere) return done(request, reply, elsewhere.url, elsewhere.flash)
    return sendPage(
      reply,
      pagesPage({
        session,
        pages: { ...pages, ...options },
        canManage: canManageContent(session.user.role, 'pages:read'),
      }),
    )
  })

  app.post(
    '/pages/:id/published',
    { config: { access: { manage: 'pages:read' } } },
    async (request, reply) => {
      const page = await services.contentAdmin.setPagePublished(
        pathParam(request, 'id'),
        flag(request, 'published'),
        actorOf(request),
      )
      return done(request, reply, url`/admin/pages?page=${returnPage(request)}#page-${page.id}`, {
        kind: 'success',
        text: `“${page.title}” is ${page.isPublished ? 'published' : 'now a draft'}.`,
      })
    },
  )
}
