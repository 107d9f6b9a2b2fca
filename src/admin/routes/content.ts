import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ValidationError } from '../../errors.js'
import type { Services } from '../../services/index.js'
import { canManageContent, roleAllows } from '../../services/roles.js'
import { actorOf } from '../actor.js'
import { url } from '../html.js'
import {
  field,
  flag,
  pageRedirect,
  paging,
  pathParam,
  redirectWithFlash,
  returnPage,
  signedIn,
} from '../requests.js'
import { formsPage, pagesPage, submissionsPage } from '../views/content.js'
import { sendPage } from '../views/layout.js'

/** Forms (with their submissions) and pages. */
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

  app.get(
    '/forms/:id/submissions',
    { config: { access: { read: 'submissions:read' } } },
    async (request, reply) => {
      const form = await services.contentAdmin.getForm(pathParam(request, 'id'))
      const options = paging(request)
      const submissions = await services.content.listSubmissionsForForm(form.id, options)
      const elsewhere = pageRedirect(
        request,
        submissions.total,
        (page) => url`/admin/forms/${form.id}/submissions?page=${page}`,
      )
      if (elsewhere) return done(request, reply, elsewhere.url, elsewhere.flash)
      return sendPage(
        reply,
        submissionsPage({
          session: signedIn(request),
          form,
          submissions: { ...submissions, ...options },
          changed: String((request.query as Record<string, unknown>).changed ?? ''),
        }),
      )
    },
  )

  const submissionChanges = {
    read: (request: FastifyRequest) => ({ isRead: flag(request, 'read') }),
    star: (request: FastifyRequest) => ({ isStarred: flag(request, 'starred') }),
    notes: (request: FastifyRequest) => ({ notes: field(request, 'notes') }),
  }
  for (const [action, readChange] of Object.entries(submissionChanges)) {
    app.post(
      `/submissions/:id/${action}`,
      { config: { access: { manage: 'submissions:read' } } },
      async (request, reply) => {
        const id = pathParam(request, 'id')
        let updated: Awaited<ReturnType<typeof services.contentAdmin.updateSubmission>>
        try {
          updated = await services.contentAdmin.updateSubmission(id, readChange(request), actorOf(request))
        } catch (error) {
          // Notes the text box should have stopped (too long, a NUL): said on the submission's page.
          if (!(error instanceof ValidationError)) throw error
          const { formId } = await services.contentAdmin.findSubmissionForm(id)
          return done(
            request,
            reply,
            url`/admin/forms/${formId}/submissions?page=${returnPage(request)}&changed=${id}#submission-${id}`,
            { kind: 'error', text: error.message },
          )
        }
        const { submission, formId } = updated
        const text =
          action === 'notes'
            ? 'Notes saved.'
            : action === 'read'
              ? `Marked as ${submission.isRead ? 'read' : 'unread'}.`
              : submission.isStarred
                ? 'Starred.'
                : 'Star removed.'
        return done(
          request,
          reply,
          url`/admin/forms/${formId}/submissions?page=${returnPage(request)}&changed=${submission.id}#submission-${submission.id}`,
          { kind: 'success', text },
        )
      },
    )
  }

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
