import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ValidationError } from '../../errors.js'
import { url } from '../../html.js'
import { type FieldDefinition, INTAKE_LIMITS, type IntakeSettings } from '../../resources/form.js'
import type { Services } from '../../services/index.js'
import { canManageContent } from '../../services/roles.js'
import { actorOf } from '../actor.js'
import { embedSnippet, fetchExample } from '../embed.js'
import { field, flag, PAGE_SIZE, pathParam, redirectWithFlash, signedIn } from '../requests.js'
import {
  BLANK_ROW,
  embedPage,
  type FieldRow,
  fieldsEditorPage,
  type IntakeMember,
  type IntakeValues,
  intakeSettingsPage,
  type RowMember,
  spamPage,
} from '../views/form-intake.js'
import { sendPage } from '../views/layout.js'

const MANAGE_FORMS = { config: { access: { manage: 'forms:read' } } } as const

/** Rows the editor reads from one post: every field a form may define, and a blank row or two. */
const MAX_ROWS = INTAKE_LIMITS.fields + 5

const ROW_MEMBERS: readonly RowMember[] = ['name', 'label', 'type', 'required', 'options', 'maxLength']
const MEMBER_LABELS: Record<RowMember | IntakeMember, string> = {
  name: 'Name',
  label: 'Label',
  type: 'Type',
  required: 'Required',
  options: 'Options',
  maxLength: 'Max length',
  enabled: 'Take submissions',
  allowedOrigins: 'Allowed origins',
  redirectUrl: 'After sending, go to',
  storeIpAddress: 'Keep the sender’s IP address',
  retentionDays: 'Delete submissions after',
  notifyEmails: 'Email each new submission to',
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/** The text of a list typed one item a line: trimmed, empty lines dropped. */
const itemsOf = (text: string) =>
  text
    .split(/\r?\n/)
    .map((item) => item.trim())
    .filter((item) => item !== '')

/**
 * A whole number as typed, for the shared checks to judge: empty is null, digits a number, and
 * anything else is passed on as it is, so that the same rule refuses it with the same words.
 */
const numberOf = (text: string): number | string | null => {
  const trimmed = text.trim()
  if (trimmed === '') return null
  return /^[0-9]{1,9}$/.test(trimmed) ? Number(trimmed) : trimmed
}

function readRows(request: FastifyRequest): FieldRow[] {
  const count = Math.min(MAX_ROWS, Math.max(0, Number.parseInt(field(request, 'count'), 10) || 0))
  return Array.from({ length: count }, (_, index) => ({
    name: field(request, `name-${index}`).trim(),
    label: field(request, `label-${index}`).trim(),
    type: field(request, `type-${index}`) || 'text',
    required: flag(request, `required-${index}`),
    options: field(request, `options-${index}`),
    maxLength: field(request, `maxLength-${index}`).trim(),
  }))
}

const isBlank = (row: FieldRow) =>
  row.name === '' && row.label === '' && row.maxLength === '' && itemsOf(row.options).length === 0

const rowOf = (definition: FieldDefinition): FieldRow => ({
  name: definition.name,
  label: definition.label,
  type: definition.type,
  required: definition.required,
  options: (definition.options ?? []).join('\n'),
  maxLength: definition.maxLength === null ? '' : String(definition.maxLength),
})

/** A row as the shared field checks read it (the import format's field definition). */
const definitionOf = (row: FieldRow): Record<string, unknown> => {
  const options = itemsOf(row.options)
  return {
    name: row.name,
    label: row.label === '' ? row.name : row.label,
    type: row.type,
    required: row.required,
    // Options typed for another type are passed on, and refused by the shared check with its reason.
    options: row.type === 'select' || options.length > 0 ? options : null,
    maxLength: numberOf(row.maxLength),
  }
}

const valuesOf = (settings: IntakeSettings): IntakeValues => ({
  enabled: settings.enabled,
  allowedOrigins: settings.allowedOrigins.join('\n'),
  redirectUrl: settings.redirectUrl ?? '',
  storeIpAddress: settings.storeIpAddress,
  retentionDays: settings.retentionDays === null ? '' : String(settings.retentionDays),
  notifyEmails: settings.notifyEmails.join('\n'),
})

const pageOf = (request: FastifyRequest) => {
  const value = (request.query as Record<string, unknown>).page
  return typeof value === 'string' && /^[1-9][0-9]{0,8}$/.test(value) ? Number(value) : 1
}

/**
 * A form's intake in the dashboard: its field definitions, its intake settings, the code a site
 * embeds, and its spam. Settings are checked by the same rules as the importer's.
 */
export function registerFormIntakeRoutes(
  app: FastifyInstance,
  services: Services,
  options: { publicUrl: string | undefined; mailConfigured: boolean },
): void {
  const done = redirectWithFlash.bind(null, services.sessions)
  const { contentAdmin, intake, spam } = services

  /** Where the form's posts go: `PUBLIC_URL`, else the origin the dashboard was reached at. */
  const actionOf = (request: FastifyRequest, formId: string) =>
    `${(options.publicUrl ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '')}/f/${encodeURIComponent(formId)}`

  const settingsOf = async (formId: string): Promise<IntakeSettings> => {
    const found = await intake.form(formId)
    // The form was read a moment before: only a concurrent deletion gets here.
    if (found === null) throw new ValidationError('The form was deleted meanwhile.')
    return found.settings
  }

  app.get('/forms/:id/fields', MANAGE_FORMS, async (request, reply) => {
    const form = await contentAdmin.getForm(pathParam(request, 'id'))
    const settings = await settingsOf(form.id)
    const rows = [...settings.fields.map(rowOf), { ...BLANK_ROW }]
    return sendPage(reply, fieldsEditorPage({ session: signedIn(request), form, rows }))
  })

  app.post('/forms/:id/fields', MANAGE_FORMS, async (request, reply) => {
    const form = await contentAdmin.getForm(pathParam(request, 'id'))
    const session = signedIn(request)
    const rows = readRows(request)
    const op = /^(up|down|remove)-([0-9]{1,3})$/.exec(field(request, 'op'))
    // Moving, removing and adding rearrange what was typed and show it again, unsaved: the whole
    // list is in the post, so nothing typed is lost, and a script is not needed.
    if (op !== null || field(request, 'op') === 'add') {
      const index = op === null ? -1 : Number(op[2])
      let notice = 'A blank row was added below. Nothing is saved until you press Save fields.'
      // A row that is not there (a page sent twice) leaves the list as it was.
      if (op !== null && index >= rows.length)
        notice = 'Nothing was moved. Nothing is saved until you press Save fields.'
      if (op !== null && index < rows.length) {
        const [row] = rows.splice(index, 1) as [FieldRow]
        const to = op[1] === 'up' ? index - 1 : op[1] === 'down' ? index + 1 : -1
        if (to >= 0 && to <= rows.length) rows.splice(to, 0, row)
        const what = row.name === '' ? 'The field' : `The field ${row.name}`
        notice = `${what} was ${to === -1 ? 'removed' : `moved ${op[1]}`}. Nothing is saved until you press Save fields.`
      }
      if (op === null || !rows.some(isBlank)) rows.push({ ...BLANK_ROW })
      return sendPage(reply, fieldsEditorPage({ session, form, rows, notice }))
    }

    // Blank rows are left out; each defined field remembers its row, for its problems.
    const kept = rows.map((row, index) => ({ row, index })).filter(({ row }) => !isBlank(row))
    const current = await settingsOf(form.id)
    try {
      const { fields } = await intake.updateSettings(
        form.id,
        { ...current, fields: kept.map(({ row }) => definitionOf(row)) },
        actorOf(request),
      )
      const same = JSON.stringify(fields) === JSON.stringify(current.fields)
      return done(request, reply, url`/admin/forms/${form.id}/fields`, {
        kind: 'success',
        text: same
          ? `Nothing changed in the fields of “${form.title}”.`
          : `Fields of “${form.title}” saved: ${fields.length} field${fields.length === 1 ? '' : 's'}.`,
      })
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      const rowProblems = new Map<number, Partial<Record<RowMember, string>>>()
      const summary: string[] = []
      for (const problem of error.problems) {
        // `fields[2].name must be…`: said beside the name of the third row that was kept.
        const match = /^fields\[([0-9]+)\](?:\.([A-Za-z]+))? (.*)$/.exec(problem)
        const at = match ? kept[Number(match[1])] : undefined
        if (!match || at === undefined) {
          summary.push(problem)
          continue
        }
        const member = ROW_MEMBERS.find((item) => item === match[2]) ?? 'name'
        const text = match[3] as string
        const found = rowProblems.get(at.index) ?? {}
        found[member] ??= capitalized(text)
        rowProblems.set(at.index, found)
        summary.push(`Field ${at.index + 1}, ${MEMBER_LABELS[member].toLowerCase()}: ${text}`)
      }
      if (!rows.some(isBlank)) rows.push({ ...BLANK_ROW })
      return sendPage(reply, fieldsEditorPage({ session, form, rows, rowProblems, problems: summary }), 422)
    }
  })

  app.get('/forms/:id/intake', MANAGE_FORMS, async (request, reply) => {
    const form = await contentAdmin.getForm(pathParam(request, 'id'))
    const settings = await settingsOf(form.id)
    return sendPage(
      reply,
      intakeSettingsPage({
        session: signedIn(request),
        form,
        values: valuesOf(settings),
        mailConfigured: options.mailConfigured,
        action: actionOf(request, form.id),
      }),
    )
  })

  app.post('/forms/:id/intake', MANAGE_FORMS, async (request, reply) => {
    const form = await contentAdmin.getForm(pathParam(request, 'id'))
    const values: IntakeValues = {
      enabled: flag(request, 'enabled'),
      allowedOrigins: field(request, 'allowedOrigins'),
      redirectUrl: field(request, 'redirectUrl').trim(),
      storeIpAddress: flag(request, 'storeIpAddress'),
      retentionDays: field(request, 'retentionDays').trim(),
      notifyEmails: field(request, 'notifyEmails'),
    }
    const current = await settingsOf(form.id)
    const days = numberOf(values.retentionDays)
    const problems: Partial<Record<IntakeMember, string>> = {}
    const said: { member: IntakeMember | undefined; text: string }[] = []
    // The shared schema would say "expected integer" of "two weeks": said here in the editor's words.
    // The text is still passed on, so the service refuses it (storing nothing) and names the
    // problems of every other setting in the same answer.
    if (typeof days === 'string') {
      problems.retentionDays = 'Must be a whole number of days, or empty to keep submissions.'
      said.push({
        member: 'retentionDays',
        text: `${MEMBER_LABELS.retentionDays}: must be a whole number of days, or empty`,
      })
    }
    try {
      await intake.updateSettings(
        form.id,
        {
          enabled: values.enabled,
          allowedOrigins: itemsOf(values.allowedOrigins),
          redirectUrl: values.redirectUrl === '' ? null : values.redirectUrl,
          storeIpAddress: values.storeIpAddress,
          retentionDays: days,
          notifyEmails: itemsOf(values.notifyEmails),
          fields: current.fields,
        },
        actorOf(request),
      )
      return done(request, reply, url`/admin/forms/${form.id}/intake`, {
        kind: 'success',
        text: `Intake settings of “${form.title}” saved${values.enabled ? '' : ': it takes no submissions'}.`,
      })
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      for (const problem of error.problems) {
        // `notifyEmails[1] must be…` is beside the addresses, as "Line 2 must be…".
        const match = /^([A-Za-z]+)(?:\[([0-9]+)\])?:? (.*)$/.exec(problem)
        const member = match
          ? (Object.keys(values) as IntakeMember[]).find((key) => key === match[1])
          : undefined
        if (!match || member === undefined) {
          said.push({ member: undefined, text: problem })
          continue
        }
        // Already said above, in the editor's words.
        if (member === 'retentionDays' && typeof days === 'string') continue
        const text =
          match[2] === undefined
            ? capitalized(match[3] as string)
            : `Line ${Number(match[2]) + 1} ${match[3]}`
        problems[member] ??= text
        said.push({
          member,
          text: `${MEMBER_LABELS[member]}: ${text.charAt(0).toLowerCase()}${text.slice(1)}`,
        })
      }
    }
    // The summary follows the page, top to bottom; what names no setting comes last.
    const order = Object.keys(values)
    const rank = (member: IntakeMember | undefined) =>
      member === undefined ? order.length : order.indexOf(member)
    const summary = said.sort((a, b) => rank(a.member) - rank(b.member)).map(({ text }) => text)
    return sendPage(
      reply,
      intakeSettingsPage({
        session: signedIn(request),
        form,
        values,
        problems,
        summary,
        mailConfigured: options.mailConfigured,
        action: actionOf(request, form.id),
      }),
      422,
    )
  })

  app.get('/forms/:id/embed', MANAGE_FORMS, async (request, reply) => {
    const form = await contentAdmin.getForm(pathParam(request, 'id'))
    const settings = await settingsOf(form.id)
    const action = actionOf(request, form.id)
    return sendPage(
      reply,
      embedPage({
        session: signedIn(request),
        form,
        action,
        enabled: settings.enabled,
        allowedOrigins: settings.allowedOrigins,
        fieldCount: settings.fields.length,
        snippet: embedSnippet({ formId: form.id, title: form.title, action, fields: settings.fields }),
        fetchCode: fetchExample(form.id),
      }),
    )
  })

  app.get('/forms/:id/spam', { config: { access: { read: 'submissions:read' } } }, async (request, reply) => {
    const session = signedIn(request)
    const form = await contentAdmin.getForm(pathParam(request, 'id'))
    const page = pageOf(request)
    const found = await spam.list(form.id, page, PAGE_SIZE)
    return sendPage(
      reply,
      spamPage({
        session,
        form,
        spam: found,
        page,
        pageSize: PAGE_SIZE,
        canManage: canManageContent(session.user.role, 'submissions:read'),
      }),
    )
  })

  app.post(
    '/spam/:id/not-spam',
    { config: { access: { manage: 'submissions:read' } } },
    async (request, reply) => {
      const { formId } = await spam.release(pathParam(request, 'id'), actorOf(request))
      return done(request, reply, url`/admin/forms/${formId}/spam`, {
        kind: 'success',
        text: 'Moved to the inbox as an unread submission.',
      })
    },
  )

  app.post(
    '/spam/:id/delete',
    { config: { access: { manage: 'submissions:read' } } },
    async (request, reply) => {
      const { formId } = await spam.remove(pathParam(request, 'id'), actorOf(request))
      return done(request, reply, url`/admin/forms/${formId}/spam`, {
        kind: 'success',
        text: 'The spam was deleted.',
      })
    },
  )
}
