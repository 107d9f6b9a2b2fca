import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { stringify } from 'csv-stringify'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ValidationError } from '../../errors.js'
import { isSafeId } from '../../ids.js'
import {
  type BulkAction,
  INBOX_FILTERS,
  INBOX_SORTS,
  type InboxFilter,
  type InboxQuery,
  type InboxSort,
  MAX_BULK_IDS,
} from '../../services/inbox.js'
import type { Services } from '../../services/index.js'
import { canManageContent } from '../../services/roles.js'
import { actorOf } from '../actor.js'
import { field, flag, pathParam, redirectWithFlash, signedIn } from '../requests.js'
import { sendPage } from '../views/layout.js'
import {
  bulkDeletePage,
  DEFAULT_VIEW,
  deleteSubmissionPage,
  INBOX_PAGE_SIZES,
  type InboxView,
  inboxHref,
  submissionsPage,
} from '../views/submissions.js'

const oneOf = <T extends string | number>(allowed: readonly T[], value: unknown, fallback: T): T =>
  allowed.find((item) => String(item) === value) ?? fallback

/**
 * The view a request asks for, from the query string (a page) or the form's hidden fields (a
 * change). Values outside the choices fall back to the defaults rather than failing: an old or
 * hand-edited bookmark still opens the inbox.
 */
function readView(source: Record<string, unknown>): InboxView {
  const text = (name: string) => {
    const value = source[name]
    return typeof value === 'string' ? value : ''
  }
  const page = /^[1-9][0-9]{0,8}$/.test(text('page')) ? Number(text('page')) : 1
  return {
    view: oneOf(['cards', 'table'] as const, text('view'), DEFAULT_VIEW.view),
    filter: oneOf<InboxFilter>(INBOX_FILTERS, text('filter'), DEFAULT_VIEW.filter),
    search: text('q'),
    sort: oneOf<InboxSort>(INBOX_SORTS, text('sort'), DEFAULT_VIEW.sort),
    size: oneOf<number>(INBOX_PAGE_SIZES, text('size'), DEFAULT_VIEW.size),
    page,
  }
}

const queryOf = (request: FastifyRequest) => readView(request.query as Record<string, unknown>)
const bodyOf = (request: FastifyRequest) => readView((request.body ?? {}) as Record<string, unknown>)

/**
 * The ids of the selected checkboxes: one `ids` field, or several. One outside the id alphabet
 * names no submission, so it is dropped before the database sees it (PostgreSQL refuses a NUL).
 */
function selectedIds(request: FastifyRequest): string[] {
  const value = (request.body as Record<string, unknown> | undefined)?.ids
  const list: unknown[] = Array.isArray(value) ? value : value === undefined ? [] : [value]
  return [...new Set(list.filter(isSafeId))]
}

const BULK_ACTIONS: readonly BulkAction[] = ['read', 'unread', 'star', 'unstar', 'delete']

const BULK_DONE: Record<BulkAction, string> = {
  read: 'marked as read',
  unread: 'marked as unread',
  star: 'starred',
  unstar: 'unstarred',
  delete: 'deleted',
}

const EXPORT_COLUMNS = [
  'id',
  'createdAt',
  'updatedAt',
  'isRead',
  'isStarred',
  'notes',
  'ipAddress',
  'userAgent',
  'referrer',
  'submittedBy',
  'data',
] as const

/** A form's submission inbox: its views, bulk changes, exports, and changes to one submission. */
export function registerSubmissionRoutes(app: FastifyInstance, services: Services): void {
  const done = redirectWithFlash.bind(null, services.sessions)
  const { inbox } = services

  /** The service's query for a view; a search that cannot be used is dropped, with the reason. */
  const inboxQuery = (formId: string, view: InboxView): { query: InboxQuery; problem?: string } => {
    try {
      return {
        query: { formId, filter: view.filter, sort: view.sort, search: inbox.checkSearch(view.search) },
      }
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      return { query: { formId, filter: view.filter, sort: view.sort, search: '' }, problem: error.message }
    }
  }

  app.get(
    '/forms/:id/submissions',
    { config: { access: { read: 'submissions:read' } } },
    async (request, reply) => {
      const session = signedIn(request)
      const form = await services.contentAdmin.getForm(pathParam(request, 'id'))
      const asked = queryOf(request)
      const { query, problem } = inboxQuery(form.id, asked)
      const view = { ...asked, search: query.search }
      const submissions = await inbox.listPage(query, view.page, view.size)
      const last = Math.max(1, Math.ceil(submissions.total / view.size))
      if (view.page > last)
        return done(request, reply, inboxHref(form.id, view, { page: last }), {
          kind: 'error',
          text: `There is no page ${view.page}: the list has ${last} page${last === 1 ? '' : 's'}, and this is the last.`,
        })
      const raw = (request.query as Record<string, unknown>).page
      if (raw !== undefined && String(raw) !== String(view.page))
        return done(request, reply, inboxHref(form.id, view, { page: 1 }), {
          kind: 'error',
          text: `“${String(raw).slice(0, 30)}” is not a page number, so this is the first page.`,
        })
      return sendPage(
        reply,
        submissionsPage({
          session,
          form,
          view,
          submissions,
          fields: (await services.intake.form(form.id))?.settings.fields ?? [],
          canManage: canManageContent(session.user.role, 'submissions:read'),
          ...(problem ? { searchProblem: problem } : {}),
          changed: String((request.query as Record<string, unknown>).changed ?? ''),
        }),
      )
    },
  )

  app.post(
    '/forms/:id/submissions/bulk',
    { config: { access: { manage: 'submissions:read' } } },
    async (request, reply) => {
      const formId = pathParam(request, 'id')
      const view = bodyOf(request)
      const action = BULK_ACTIONS.find((item) => item === field(request, 'action'))
      if (!action) throw new ValidationError('Choose what to do with the selected submissions.')
      const ids = selectedIds(request)
      if (ids.length === 0)
        return done(request, reply, inboxHref(formId, view), {
          kind: 'error',
          text: 'Select at least one submission first.',
        })
      if (ids.length > MAX_BULK_IDS)
        throw new ValidationError(`At most ${MAX_BULK_IDS} submissions can be changed at once.`)
      // Erasing cannot be undone: a bulk delete asks first, listing what it will erase.
      if (action === 'delete' && field(request, 'confirmed') !== 'yes') {
        const form = await services.contentAdmin.getForm(formId)
        const submissions = await inbox.selectedSubmissions(formId, ids, view.sort)
        if (submissions.length === 0)
          return done(request, reply, inboxHref(formId, view), {
            kind: 'error',
            text: 'None of the selected submissions is in this form any more.',
          })
        return sendPage(reply, bulkDeletePage({ session: signedIn(request), form, submissions, view }))
      }
      const count = await inbox.applyBulk(formId, ids, action, actorOf(request))
      return done(request, reply, inboxHref(formId, view), {
        kind: 'success',
        text: `${count} submission${count === 1 ? '' : 's'} ${BULK_DONE[action]}.`,
      })
    },
  )

  app.get(
    '/forms/:id/submissions/export',
    { config: { access: { read: 'submissions:read' } } },
    async (request, reply) => {
      const form = await services.contentAdmin.getForm(pathParam(request, 'id'))
      const raw = request.query as Record<string, unknown>
      const format = raw.format === 'json' ? 'json' : raw.format === 'csv' ? 'csv' : undefined
      if (!format) throw new ValidationError('The export format must be csv or json.')
      const view = readView(raw)
      // An export with an unusable search would be a different view from the one asked for: refused.
      const query: InboxQuery = {
        formId: form.id,
        filter: view.filter,
        sort: view.sort,
        search: inbox.checkSearch(view.search),
      }
      const stamp = new Date().toISOString().slice(0, 10)
      reply
        .header(
          'content-type',
          format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
        )
        .header('content-disposition', `attachment; filename="submissions-${form.id}-${stamp}.${format}"`)
        .header('cache-control', 'no-store')
      // A HEAD request (a link checker, a download manager asking the size) exports nothing.
      if (request.method === 'HEAD') return reply.send()
      // Audited before the first byte, with the view's size then: an export is never unrecorded,
      // even one the browser abandons half way.
      await inbox.recordExport(query, format, await inbox.countView(query), actorOf(request))
      return reply.send(format === 'csv' ? csvStream(query) : jsonStream(query))
    },
  )

  /** CSV of a view: one row per submission, the data as its JSON text in the last column. */
  const csvStream = (query: InboxQuery): Readable => {
    const csv = stringify({
      header: true,
      columns: [...EXPORT_COLUMNS],
      // A cell starting with = + - @ is prefixed with ' so a spreadsheet shows it instead of running it.
      escape_formulas: true,
      cast: { boolean: (value) => (value ? 'true' : 'false') },
    })
    const rows = async function* () {
      for await (const batch of inbox.exportRows(query)) {
        for (const row of batch) {
          yield {
            id: row.id,
            createdAt: row.created_at,
            updatedAt: row.updated_at,
            isRead: row.is_read === 1,
            isStarred: row.is_starred === 1,
            notes: row.notes,
            ipAddress: row.ip_address,
            userAgent: row.user_agent,
            referrer: row.referrer,
            submittedBy: row.submitted_by,
            data: row.data,
          }
        }
      }
    }
    pipeline(Readable.from(rows()), csv).catch((error: unknown) => {
      app.log.error({ err: error }, 'submission export failed part way')
    })
    return csv
  }

  /** JSON of a view: an array of submissions, each exactly as the API writes it. */
  const jsonStream = (query: InboxQuery): Readable => {
    const chunks = async function* () {
      let first = true
      yield '['
      for await (const batch of inbox.exportJson(query)) {
        let text = ''
        for (const json of batch) {
          text += (first ? '\n' : ',\n') + json
          first = false
        }
        yield text
      }
      yield first ? ']\n' : '\n]\n'
    }
    // Fastify ends the reply if the stream fails part way (and logs why).
    return Readable.from(chunks())
  }

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
        const view = bodyOf(request)
        let updated: Awaited<ReturnType<typeof services.contentAdmin.updateSubmission>>
        try {
          updated = await services.contentAdmin.updateSubmission(id, readChange(request), actorOf(request))
        } catch (error) {
          // Notes the text box should have stopped (too long, a NUL): said on the submission's page.
          if (!(error instanceof ValidationError)) throw error
          const { formId } = await services.contentAdmin.findSubmissionForm(id)
          return done(request, reply, inboxHref(formId, view, { changed: id }), {
            kind: 'error',
            text: error.message,
          })
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
        return done(request, reply, inboxHref(formId, view, { changed: submission.id }), {
          kind: 'success',
          text,
        })
      },
    )
  }

  app.get(
    '/submissions/:id/delete',
    { config: { access: { manage: 'submissions:read' } } },
    async (request, reply) => {
      const { formId, submission } = await inbox.getSubmission(pathParam(request, 'id'))
      const form = await services.contentAdmin.getForm(formId)
      return sendPage(
        reply,
        deleteSubmissionPage({ session: signedIn(request), form, submission, view: queryOf(request) }),
      )
    },
  )

  app.post(
    '/submissions/:id/delete',
    { config: { access: { manage: 'submissions:read' } } },
    async (request, reply: FastifyReply) => {
      const { formId } = await inbox.getSubmission(pathParam(request, 'id'))
      await inbox.applyBulk(formId, [pathParam(request, 'id')], 'delete', actorOf(request))
      return done(request, reply, inboxHref(formId, queryOf(request)), {
        kind: 'success',
        text: 'The submission was deleted.',
      })
    },
  )
}
