import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ValidationError } from '../../errors.js'
import { url } from '../../html.js'
import { FieldValidationError } from '../../services/content-admin.js'
import type { Services } from '../../services/index.js'
import {
  exportRedirects,
  isRedirectExportFormat,
  REDIRECT_EXPORT_FILES,
  REDIRECT_EXPORT_FORMATS,
  redirectExportHostWarning,
  redirectExportProblem,
} from '../../services/redirects/exports.js'
import type { RedirectChange, RedirectField } from '../../services/redirects/index.js'
import { canManageContent } from '../../services/roles.js'
import { actorOf } from '../actor.js'
import { answerList, listHref, readListView } from '../list-view.js'
import { field, flag, PAGE_SIZE, pathParam, redirectWithFlash, signedIn } from '../requests.js'
import { sendPage } from '../views/layout.js'
import {
  applyRedirectsPage,
  deleteRedirectPage,
  importPage,
  REDIRECT_LIST,
  type RedirectFormValues,
  redirectFormPage,
  redirectsPage,
} from '../views/redirects.js'

const READ = { config: { access: { read: 'redirects:read' } } } as const
const MANAGE = { config: { access: { manage: 'redirects:read' } } } as const

const formValues = (request: FastifyRequest): RedirectFormValues => ({
  fromPath: field(request, 'fromPath'),
  toPath: field(request, 'toPath'),
  type: field(request, 'type'),
  isActive: flag(request, 'isActive'),
})

/** A query parameter given once, as text; absent or repeated reads as the empty string. */
const queryText = (request: FastifyRequest, name: string): string => {
  const value = (request.query as Record<string, unknown>)[name]
  return typeof value === 'string' ? value : ''
}

/** What a saved change means, chains included: they are allowed, but worth flattening. */
function savedText(verb: string, { redirect, chains, moreChains }: RedirectChange): string {
  const saved = `Redirect from ${redirect.fromPath} to ${redirect.toPath} ${verb}.`
  if (chains.length === 0) return saved
  const listed = `${chains.join('; ')}${moreChains ? '; and more' : ''}`
  return `${saved} Note: it is part of a chain (${listed}), so visitors are redirected more than once. Flatten the chains to send them straight to the end.`
}

/** Redirects: everyone who reads them sees the list and exports it; editors and admins change them. */
/** A refused save as the editor shows it: every problem above the form, and each field's beside it. */
const refusal = (error: ValidationError) => ({
  problems: error.problems,
  fields:
    error instanceof FieldValidationError ? (error.fields as Partial<Record<RedirectField, string>>) : {},
})

export function registerRedirectRoutes(app: FastifyInstance, services: Services): void {
  const done = redirectWithFlash.bind(null, services.sessions)

  /** Back to the list, on the page that holds `id` (new redirects come last: oldest first). */
  const backToList = async (request: FastifyRequest, reply: FastifyReply, id: string, text: string) => {
    const { total } = await services.content.listRedirects({ page: 1, pageSize: 1 })
    const page = Math.max(1, Math.ceil(total / PAGE_SIZE))
    return done(request, reply, url`/admin/redirects?page=${page}#redirect-${id}`, { kind: 'success', text })
  }

  app.get('/redirects', READ, async (request, reply) => {
    const session = signedIn(request)
    // The chain report is read meanwhile; the list waits for it only to draw the page (a page sent
    // elsewhere never waits, so a failure is handled here too, not left unhandled).
    const chains = services.redirects.findChains()
    chains.catch(() => undefined)
    const list = {
      request,
      reply,
      sessions: services.sessions,
      spec: REDIRECT_LIST,
      list: services.lists.redirects,
    }
    return answerList(list, async ({ view, result, searchProblem }) =>
      redirectsPage({
        session,
        view,
        redirects: result,
        chains: await chains,
        canManage: canManageContent(session.user.role, 'redirects:read'),
        searchProblem,
      }),
    )
  })

  app.get('/redirects/export.csv', READ, async (_request, reply) =>
    reply
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', 'attachment; filename="redirects.csv"')
      .send(services.redirects.exportCsv()),
  )

  app.get('/redirects/apply', READ, async (request, reply) => {
    const target = queryText(request, 'target') || undefined
    const answer = target === undefined ? undefined : (await services.redirectApplier.matcher()).match(target)
    return sendPage(reply, applyRedirectsPage({ session: signedIn(request), target, answer }))
  })

  // Streamed from the cached matcher: 100,000 redirects never sit in memory as one string.
  app.get('/redirects/export', READ, async (request, reply) => {
    const format = queryText(request, 'format')
    if (!isRedirectExportFormat(format))
      throw new ValidationError(`Choose an export format: ${REDIRECT_EXPORT_FORMATS.join(', ')}.`)
    const options = { host: queryText(request, 'host').trim() || undefined }
    // The export form has a host field: here a Cloudflare file is only made whole.
    const problem = redirectExportProblem(format, options) ?? redirectExportHostWarning(format, options)
    if (problem !== null) throw new ValidationError(`Cannot export: ${problem}.`)
    const rules = (await services.redirectApplier.matcher()).rules()
    const { fileName, mediaType } = REDIRECT_EXPORT_FILES[format]
    return reply
      .type(mediaType)
      .header('Content-Disposition', `attachment; filename="${fileName}"`)
      .send(Readable.from(exportRedirects(format, rules, options)))
  })

  app.get('/redirects/new', MANAGE, async (request, reply) =>
    sendPage(
      reply,
      redirectFormPage({
        session: signedIn(request),
        values: { fromPath: '', toPath: '', type: 'permanent', isActive: true },
      }),
    ),
  )

  app.post('/redirects', MANAGE, async (request, reply) => {
    const values = formValues(request)
    try {
      const change = await services.redirects.createRedirect(values, actorOf(request))
      return backToList(request, reply, change.redirect.id, savedText('created', change))
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      const page = redirectFormPage({ session: signedIn(request), values, ...refusal(error) })
      return sendPage(reply, page, 422)
    }
  })

  app.get('/redirects/:id/edit', MANAGE, async (request, reply) => {
    const redirect = await services.redirects.getRedirectForEditing(pathParam(request, 'id'))
    return sendPage(
      reply,
      redirectFormPage({ session: signedIn(request), id: redirect.id, values: redirect }),
    )
  })

  app.post('/redirects/:id', MANAGE, async (request, reply) => {
    const id = pathParam(request, 'id')
    const values = formValues(request)
    try {
      const change = await services.redirects.updateRedirect(id, values, actorOf(request))
      return backToList(request, reply, id, savedText('saved', change))
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      const page = redirectFormPage({ session: signedIn(request), id, values, ...refusal(error) })
      return sendPage(reply, page, 422)
    }
  })

  app.post('/redirects/:id/active', MANAGE, async (request, reply) => {
    const change = await services.redirects.setRedirectActive(
      pathParam(request, 'id'),
      flag(request, 'active'),
      actorOf(request),
    )
    const view = readListView(REDIRECT_LIST, request.body)
    return done(request, reply, listHref(REDIRECT_LIST, view, view.page, `redirect-${change.redirect.id}`), {
      kind: 'success',
      text: savedText(change.redirect.isActive ? 'activated' : 'deactivated', change),
    })
  })

  app.get('/redirects/:id/delete', MANAGE, async (request, reply) => {
    const redirect = await services.redirects.getRedirect(pathParam(request, 'id'))
    return sendPage(reply, deleteRedirectPage({ session: signedIn(request), redirect }))
  })

  app.post('/redirects/:id/delete', MANAGE, async (request, reply) => {
    const redirect = await services.redirects.deleteRedirect(pathParam(request, 'id'), actorOf(request))
    return done(request, reply, url`/admin/redirects`, {
      kind: 'success',
      text: `Redirect from ${redirect.fromPath} deleted.`,
    })
  })

  app.post('/redirects/flatten', MANAGE, async (request, reply) => {
    const { changed, madeTemporary } = await services.redirects.flattenChains(actorOf(request))
    // A permanent redirect whose chain passed through a temporary one answered 302; saying that it
    // is now temporary explains the type a person sees changed in the list.
    const temporaryNote =
      madeTemporary === 0
        ? ''
        : ` ${madeTemporary === changed && changed === 1 ? 'It is' : `${madeTemporary} of them ${madeTemporary === 1 ? 'is' : 'are'}`} now temporary (302), as a link of ${madeTemporary === 1 ? 'its' : 'their'} chain was, so visitors get the answer they got before.`
    return done(request, reply, url`/admin/redirects`, {
      kind: 'success',
      text:
        changed === 0
          ? 'There were no chains to flatten.'
          : `Flattened: ${changed} redirect${changed === 1 ? ' now points' : 's now point'} straight at the end of its chain.${temporaryNote}`,
    })
  })

  app.get('/redirects/import', MANAGE, async (request, reply) =>
    sendPage(reply, importPage({ session: signedIn(request) })),
  )

  app.post('/redirects/import', MANAGE, async (request, reply) => {
    const file = field(request, 'file')
    const csv = file.trim() === '' ? field(request, 'csv') : file
    try {
      const result = await services.redirects.importCsv(csv, actorOf(request))
      const chains = result.chainCount
      return done(request, reply, url`/admin/redirects`, {
        kind: 'success',
        text: `Imported: ${result.created} created, ${result.updated} updated, ${result.unchanged} unchanged.${chains > 0 ? ` ${chains} redirect${chains === 1 ? ' forms a chain' : 's form chains'}: see below.` : ''}`,
      })
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      const page = importPage({
        session: signedIn(request),
        csv: file === '' ? csv : undefined,
        problems: error.problems,
      })
      return sendPage(reply, page, 422)
    }
  })
}
