import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type SafeHtml, url } from '../../html.js'
import { FieldValidationError, type FormField, type PageField } from '../../services/content-admin.js'
import type { Services } from '../../services/index.js'
import { canManageContent, roleAllows } from '../../services/roles.js'
import { actorOf } from '../actor.js'
import { answerList, listHref, readListView } from '../list-view.js'
import { field, flag, PAGE_SIZE, pathParam, redirectWithFlash, signedIn } from '../requests.js'
import {
  deleteFormPage,
  deletePagePage,
  FORM_LIST,
  type FormEditorValues,
  formEditorPage,
  formsPage,
  PAGE_LIST,
  type PageEditorValues,
  pageEditorPage,
  pagesPage,
} from '../views/content.js'
import { sendPage } from '../views/layout.js'

const MANAGE_FORMS = { config: { access: { manage: 'forms:read' } } } as const
const MANAGE_PAGES = { config: { access: { manage: 'pages:read' } } } as const

const formValues = (request: FastifyRequest): FormEditorValues => ({
  title: field(request, 'title'),
  description: field(request, 'description'),
  isActive: flag(request, 'isActive'),
})

const pageValues = (request: FastifyRequest): PageEditorValues => ({
  title: field(request, 'title'),
  slug: field(request, 'slug'),
  path: field(request, 'path'),
  pageType: field(request, 'pageType'),
  isPublished: flag(request, 'isPublished'),
})

/** The list page (1 for the first) that shows the row `position` rows from the top. */
const listPage = (position: number) => Math.floor(position / PAGE_SIZE) + 1

/** Forms and pages (a form's submissions have `submissions.ts`). */
export function registerContentRoutes(app: FastifyInstance, services: Services): void {
  const done = redirectWithFlash.bind(null, services.sessions)
  const admin = services.contentAdmin

  /**
   * Runs a save; a refused one shows the editor again, 422, with what was typed and each problem
   * beside its field. Anything else (a missing id, an unreachable database) goes to the error page.
   */
  const saving = async <F extends string>(
    reply: FastifyReply,
    save: () => Promise<FastifyReply>,
    refused: (problems: Partial<Record<F, string>>) => SafeHtml,
  ): Promise<FastifyReply> => {
    try {
      return await save()
    } catch (error) {
      if (!(error instanceof FieldValidationError)) throw error
      return sendPage(reply, refused(error.fields as Partial<Record<F, string>>), 422)
    }
  }

  /** Back to the forms list, on the page that shows form `id`. */
  const toForm = async (request: FastifyRequest, reply: FastifyReply, id: string, text: string) => {
    const page = listPage(await admin.formPosition(id))
    return done(request, reply, url`/admin/forms?page=${page}#form-${id}`, { kind: 'success', text })
  }

  /** Back to the pages list, on the page that shows page `id`. */
  const toPage = async (request: FastifyRequest, reply: FastifyReply, id: string, text: string) => {
    const page = listPage(await admin.pagePosition(id))
    return done(request, reply, url`/admin/pages?page=${page}#page-${id}`, { kind: 'success', text })
  }

  app.get('/forms', { config: { access: { read: 'forms:read' } } }, async (request, reply) => {
    const session = signedIn(request)
    const list = { request, reply, sessions: services.sessions, spec: FORM_LIST, list: services.lists.forms }
    return answerList(list, ({ view, result, searchProblem }) =>
      formsPage({
        session,
        view,
        forms: result,
        searchProblem,
        showSubmissions: roleAllows(session.user.role, 'submissions:read'),
        canManage: canManageContent(session.user.role, 'forms:read'),
      }),
    )
  })

  app.post('/forms/:id/active', MANAGE_FORMS, async (request, reply) => {
    const form = await services.contentAdmin.setFormActive(
      pathParam(request, 'id'),
      flag(request, 'active'),
      actorOf(request),
    )
    const view = readListView(FORM_LIST, request.body)
    return done(request, reply, listHref(FORM_LIST, view, view.page, `form-${form.id}`), {
      kind: 'success',
      text: `“${form.title}” is ${form.isActive ? 'active' : 'inactive'}.`,
    })
  })

  app.get('/pages', { config: { access: { read: 'pages:read' } } }, async (request, reply) => {
    const session = signedIn(request)
    const list = { request, reply, sessions: services.sessions, spec: PAGE_LIST, list: services.lists.pages }
    return answerList(list, ({ view, result, searchProblem }) =>
      pagesPage({
        session,
        view,
        pages: result,
        searchProblem,
        canManage: canManageContent(session.user.role, 'pages:read'),
      }),
    )
  })

  app.post('/pages/:id/published', MANAGE_PAGES, async (request, reply) => {
    const page = await services.contentAdmin.setPagePublished(
      pathParam(request, 'id'),
      flag(request, 'published'),
      actorOf(request),
    )
    const view = readListView(PAGE_LIST, request.body)
    return done(request, reply, listHref(PAGE_LIST, view, view.page, `page-${page.id}`), {
      kind: 'success',
      text: `“${page.title}” is ${page.isPublished ? 'published' : 'now a draft'}.`,
    })
  })

  app.get('/forms/new', MANAGE_FORMS, async (request, reply) =>
    sendPage(
      reply,
      formEditorPage({ session: signedIn(request), values: { title: '', description: '', isActive: true } }),
    ),
  )

  app.post('/forms', MANAGE_FORMS, async (request, reply) => {
    const values = formValues(request)
    return saving<FormField>(
      reply,
      async () => {
        const form = await admin.createForm(values, actorOf(request))
        return toForm(request, reply, form.id, `Form “${form.title}” created.`)
      },
      (problems) => formEditorPage({ session: signedIn(request), values, problems }),
    )
  })

  app.get('/forms/:id/edit', MANAGE_FORMS, async (request, reply) => {
    const form = await admin.getForm(pathParam(request, 'id'))
    const values = { title: form.title, description: form.description ?? '', isActive: form.isActive }
    return sendPage(reply, formEditorPage({ session: signedIn(request), id: form.id, values }))
  })

  app.post('/forms/:id', MANAGE_FORMS, async (request, reply) => {
    const id = pathParam(request, 'id')
    const values = formValues(request)
    return saving<FormField>(
      reply,
      async () => {
        const { item, changed } = await admin.updateForm(id, values, actorOf(request))
        const text =
          changed.length === 0 ? `Nothing changed in “${item.title}”.` : `Form “${item.title}” saved.`
        return toForm(request, reply, id, text)
      },
      (problems) => formEditorPage({ session: signedIn(request), id, values, problems }),
    )
  })

  app.get('/forms/:id/delete', MANAGE_FORMS, async (request, reply) => {
    const form = await admin.getForm(pathParam(request, 'id'))
    return sendPage(reply, deleteFormPage({ session: signedIn(request), form }))
  })

  app.post('/forms/:id/delete', MANAGE_FORMS, async (request, reply) => {
    const { form, deletedSubmissions: count } = await admin.deleteForm(
      pathParam(request, 'id'),
      actorOf(request),
    )
    return done(request, reply, url`/admin/forms`, {
      kind: 'success',
      text: `Form “${form.title}” deleted${count === 0 ? '' : `, with its ${count} submission${count === 1 ? '' : 's'}`}.`,
    })
  })

  app.get('/pages/new', MANAGE_PAGES, async (request, reply) =>
    sendPage(
      reply,
      pageEditorPage({
        session: signedIn(request),
        values: { title: '', slug: '', path: '', pageType: 'page', isPublished: false },
      }),
    ),
  )

  app.post('/pages', MANAGE_PAGES, async (request, reply) => {
    const values = pageValues(request)
    return saving<PageField>(
      reply,
      async () => {
        const page = await admin.createPage(values, actorOf(request))
        return toPage(request, reply, page.id, `Page “${page.title}” created.`)
      },
      (problems) => pageEditorPage({ session: signedIn(request), values, problems }),
    )
  })

  app.get('/pages/:id/edit', MANAGE_PAGES, async (request, reply) => {
    const page = await admin.getPage(pathParam(request, 'id'))
    return sendPage(
      reply,
      pageEditorPage({
        session: signedIn(request),
        id: page.id,
        publishedAt: page.publishedAt,
        values: page,
      }),
    )
  })

  app.post('/pages/:id', MANAGE_PAGES, async (request, reply) => {
    const id = pathParam(request, 'id')
    const values = pageValues(request)
    return saving<PageField>(
      reply,
      async () => {
        const { item, changed } = await admin.updatePage(id, values, actorOf(request))
        const text =
          changed.length === 0 ? `Nothing changed in “${item.title}”.` : `Page “${item.title}” saved.`
        return toPage(request, reply, id, text)
      },
      (problems) => pageEditorPage({ session: signedIn(request), id, values, problems }),
    )
  })

  app.get('/pages/:id/delete', MANAGE_PAGES, async (request, reply) => {
    const page = await admin.getPage(pathParam(request, 'id'))
    return sendPage(reply, deletePagePage({ session: signedIn(request), page }))
  })

  app.post('/pages/:id/delete', MANAGE_PAGES, async (request, reply) => {
    const page = await admin.deletePage(pathParam(request, 'id'), actorOf(request))
    return done(request, reply, url`/admin/pages`, {
      kind: 'success',
      text: `Page “${page.title}” at ${page.path} deleted.`,
    })
  })
}
