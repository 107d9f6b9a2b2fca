import { html, type SafeHtml, url } from '../../html.js'
import { FIELD_TYPES, INTAKE_LIMITS, SPAM_RETENTION_DAYS } from '../../resources/form.js'
import type { PageOf } from '../../schemas.js'
import type { AdminForm } from '../../services/content-admin.js'
import { canManageContent, roleAllows } from '../../services/roles.js'
import type { AdminSession } from '../../services/sessions.js'
import type { SpamSubmission } from '../../services/spam.js'
import {
  csrfField,
  emptyState,
  errorSummary,
  formIdLine,
  pagination,
  postButton,
  timestamp,
} from './components.js'
import { layout } from './layout.js'

/** The screens of one form, each a tab of its page. */
export type FormTab = 'details' | 'fields' | 'intake' | 'embed' | 'submissions' | 'spam'

/**
 * The form's tabs that the user's role opens: its details, fields, intake settings and embed code
 * for those who edit forms; its submissions and spam for those who read submissions.
 */
export function formTabs(formId: string, current: FormTab, session: AdminSession): SafeHtml {
  const role = session.user.role
  const edits = canManageContent(role, 'forms:read')
  const reads = roleAllows(role, 'submissions:read')
  const tabs: [FormTab, string, boolean][] = [
    ['details', 'Details', edits],
    ['fields', 'Fields', edits],
    ['intake', 'Intake', edits],
    ['embed', 'Embed', edits],
    ['submissions', 'Submissions', reads],
    ['spam', 'Spam', reads],
  ]
  const href = (tab: FormTab) =>
    tab === 'details' ? url`/admin/forms/${formId}/edit` : url`/admin/forms/${formId}/${tab}`
  return html`<nav class="tabs" aria-label="This form"><ul>${tabs
    .filter(([, , shown]) => shown)
    .map(
      ([tab, label]) =>
        html`<li><a href="${href(tab)}"${tab === current ? html` aria-current="page"` : ''}>${label}</a></li>`,
    )}</ul></nav>`
}

/** The head of a form's tab: breadcrumbs, the title, the id and the tabs. */
function formHead(form: AdminForm, tab: FormTab, session: AdminSession, heading: string): SafeHtml {
  return html`<nav class="breadcrumbs" aria-label="Breadcrumbs"><a href="/admin/forms">Forms</a> › <span aria-current="page">${form.title}</span></nav>
<h1>${heading}</h1>
${formIdLine(form.id)}
${formTabs(form.id, tab, session)}`
}

/** One row of the field editor, as typed: every member is text until it is saved. */
export interface FieldRow {
  name: string
  label: string
  type: string
  required: boolean
  /** One option a line (selects only). */
  options: string
  maxLength: string
}

export const BLANK_ROW: FieldRow = {
  name: '',
  label: '',
  type: 'text',
  required: false,
  options: '',
  maxLength: '',
}

/** The members of a row that a problem can be beside. */
export type RowMember = 'name' | 'label' | 'type' | 'required' | 'options' | 'maxLength'

const TYPE_LABELS: Record<(typeof FIELD_TYPES)[number], string> = {
  text: 'Text',
  textarea: 'Text, several lines',
  email: 'Email address',
  url: 'Web address (URL)',
  tel: 'Telephone number',
  number: 'Number',
  date: 'Date',
  checkbox: 'Checkbox',
  select: 'Choice from a list (select)',
}

/** The note beside a control, and the attributes tying the control to it. */
function note(id: string, problem: string | undefined, hint?: string) {
  const ids = [hint ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter((item) => item !== '')
  return {
    text: html`${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}${problem ? html`<p class="field-problem" id="${id}-problem">${problem}</p>` : ''}`,
    attributes: html`${ids.length > 0 ? html` aria-describedby="${ids.join(' ')}"` : ''}${problem ? html` aria-invalid="true"` : ''}`,
  }
}

function fieldRow(
  row: FieldRow,
  index: number,
  count: number,
  problems: Partial<Record<RowMember, string>>,
): SafeHtml {
  const id = (member: RowMember) => `row-${index}-${member}`
  const input = (member: 'name' | 'label' | 'maxLength', label: string, extra: SafeHtml, hint?: string) => {
    const { text, attributes } = note(id(member), problems[member], hint)
    return html`<div class="field field-${member}"><label for="${id(member)}">${label}</label>${text}<input id="${id(member)}" name="${member}-${index}" value="${row[member]}"${extra}${attributes}></div>`
  }
  const blank = row.name === '' && row.label === ''
  const title = blank ? 'New field' : `Field ${index + 1}${row.name === '' ? '' : `: ${row.name}`}`
  const subject = blank ? 'the new field' : `field ${index + 1}${row.name === '' ? '' : ` (${row.name})`}`
  const type = note(id('type'), problems.type)
  const options = note(
    id('options'),
    problems.options,
    'For a choice from a list: one option a line. Leave empty for other types.',
  )
  const required = problems.required
  const move = (op: string, label: string, disabled: boolean) =>
    html`<button type="submit" name="op" value="${op}-${index}" class="button secondary small" aria-label="${label} ${subject}"${disabled ? html` disabled` : ''}>${label}</button>`
  return html`<fieldset class="field-row" id="row-${index}">
  <legend>${title}</legend>
  <div class="field-row-grid">
    ${input('name', 'Name', html` type="text" maxlength="${INTAKE_LIMITS.nameLength}" autocomplete="off" spellcheck="false"`, 'What the HTML form posts it as, e.g. email.')}
    ${input('label', 'Label', html` type="text" maxlength="200"`, 'What visitors read beside it.')}
    <div class="field field-type"><label for="${id('type')}">Type</label>${type.text}<select id="${id('type')}" name="type-${index}"${type.attributes}>${FIELD_TYPES.map((value) => html`<option value="${value}"${row.type === value ? html` selected` : ''}>${TYPE_LABELS[value]}</option>`)}</select></div>
    ${input('maxLength', 'Max length', html` type="text" inputmode="numeric" size="6"`, 'Characters; empty for no cap.')}
  </div>
  <div class="field field-options"><label for="${id('options')}">Options</label>${options.text}<textarea id="${id('options')}" name="options-${index}" rows="2"${options.attributes}>${row.options}</textarea></div>
  <div class="choice"><input type="checkbox" id="${id('required')}" name="required-${index}" value="true"${row.required ? html` checked` : ''}><label for="${id('required')}">Required <span class="hint">A post without it, or with it blank, is refused.</span></label></div>
  ${required ? html`<p class="field-problem">${required}</p>` : ''}
  <div class="actions row-actions">${move('up', 'Move up', index === 0)}${move('down', 'Move down', index === count - 1)}${move('remove', 'Remove', false)}</div>
</fieldset>`
}

/**
 * The field editor: a row of inputs per field, and a blank row to add one. Without a script, the
 * move and remove buttons post the whole list and get it back rearranged, still to be saved.
 */
export function fieldsEditorPage(input: {
  session: AdminSession
  form: AdminForm
  rows: readonly FieldRow[]
  /** Problems by row index, each beside its input. */
  rowProblems?: ReadonlyMap<number, Partial<Record<RowMember, string>>>
  /** Every problem, for the summary above the form. */
  problems?: readonly string[]
  /** What the last button did, when it did not save (a row moved, added or removed). */
  notice?: string
}): SafeHtml {
  const { session, form, rows } = input
  const rowProblems = input.rowProblems ?? new Map()
  return layout({
    title: `Fields of ${form.title}`,
    session,
    section: 'forms',
    body: html`${formHead(form, 'fields', session, `Fields of “${form.title}”`)}
<section class="panel">
  <p class="lead">The fields a post to this form must follow, in the order the embed code shows them. Fields a post
  sends that are not defined here are kept as they are. A row left empty is not saved.</p>
  ${input.notice ? html`<div class="alert warning" role="status">${input.notice}</div>` : ''}
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="${url`/admin/forms/${form.id}/fields`}" class="stack" novalidate>
    ${csrfField(session.csrfToken)}
    <button type="submit" name="op" value="save" class="visually-hidden" tabindex="-1" aria-hidden="true">Save fields</button>
    <input type="hidden" name="count" value="${rows.length}">
    ${rows.map((row, index) => fieldRow(row, index, rows.length, rowProblems.get(index) ?? {}))}
    <div class="actions">
      <button type="submit" name="op" value="save" class="button primary">Save fields</button>
      <button type="submit" name="op" value="add" class="button secondary">Add another field</button>
      <a class="button secondary" href="${url`/admin/forms/${form.id}/fields`}">Discard changes</a>
    </div>
  </form>
</section>`,
  })
}

/** The intake settings as typed: lists one item a line, numbers as text. */
export interface IntakeValues {
  enabled: boolean
  allowedOrigins: string
  redirectUrl: string
  storeIpAddress: boolean
  retentionDays: string
  notifyEmails: string
}

export type IntakeMember = keyof IntakeValues

function checkbox(name: string, label: string, checked: boolean, hint: SafeHtml | string) {
  return html`<div class="choice">
      <input type="checkbox" id="field-${name}" name="${name}" value="true"${checked ? html` checked` : ''}>
      <label for="field-${name}">${label} <span class="hint">${hint}</span></label>
    </div>`
}

function lines(input: {
  name: IntakeMember
  label: string
  value: string
  hint: SafeHtml | string
  problem: string | undefined
  after?: SafeHtml
  placeholder: string
}): SafeHtml {
  const id = `field-${input.name}`
  const ids = [`${id}-hint`, input.after ? `${id}-note` : '', input.problem ? `${id}-problem` : ''].filter(
    (item) => item !== '',
  )
  return html`<div class="field">
  <label for="${id}">${input.label}</label>
  <p class="hint" id="${id}-hint">${input.hint}</p>
  ${input.after ? html`<div id="${id}-note">${input.after}</div>` : ''}
  ${input.problem ? html`<p class="field-problem" id="${id}-problem">${input.problem}</p>` : ''}
  <textarea id="${id}" name="${input.name}" rows="3" placeholder="${input.placeholder}" spellcheck="false" aria-describedby="${ids.join(' ')}"${input.problem ? html` aria-invalid="true"` : ''}>${input.value}</textarea>
</div>`
}

function line(input: {
  name: IntakeMember
  label: string
  value: string
  hint: string
  problem: string | undefined
  inputmode?: string
  placeholder?: string
}): SafeHtml {
  const id = `field-${input.name}`
  const ids = [`${id}-hint`, input.problem ? `${id}-problem` : ''].filter((item) => item !== '')
  return html`<div class="field">
  <label for="${id}">${input.label}</label>
  <p class="hint" id="${id}-hint">${input.hint}</p>
  ${input.problem ? html`<p class="field-problem" id="${id}-problem">${input.problem}</p>` : ''}
  <input id="${id}" name="${input.name}" type="text" value="${input.value}"${input.inputmode ? html` inputmode="${input.inputmode}"` : ''}${input.placeholder ? html` placeholder="${input.placeholder}"` : ''} aria-describedby="${ids.join(' ')}"${input.problem ? html` aria-invalid="true"` : ''}>
</div>`
}

/** A form's intake settings: whether it takes posts, from where, where visitors go, what is kept. */
export function intakeSettingsPage(input: {
  session: AdminSession
  form: AdminForm
  values: IntakeValues
  problems?: Partial<Record<IntakeMember, string>>
  summary?: readonly string[]
  /** Whether outgoing mail is configured; without it, notification addresses are kept but not mailed. */
  mailConfigured: boolean
  /** Where the form posts to, to show beside the switch. */
  action: string
}): SafeHtml {
  const { session, form, values } = input
  const problems = input.problems ?? {}
  const noMail = input.mailConfigured
    ? undefined
    : html`<p class="alert warning">No mail is sent: this server has no outgoing mail configured (<code>SMTP_URL</code> and <code>MAIL_FROM</code>). The addresses are kept for when it has one.</p>`
  return layout({
    title: `Intake of ${form.title}`,
    session,
    section: 'forms',
    body: html`${formHead(form, 'intake', session, `Intake of “${form.title}”`)}
<section class="panel narrow">
  ${errorSummary(input.summary ?? [])}
  <form method="post" action="${url`/admin/forms/${form.id}/intake`}" class="stack" novalidate>
    ${csrfField(session.csrfToken)}
    ${checkbox('enabled', 'Take submissions', values.enabled, html`A site’s own HTML form can post to <code>${input.action}</code>${form.isActive ? '' : ' once the form is active again'}. Off, posts are answered “not found”.`)}
    ${lines({ name: 'allowedOrigins', label: 'Allowed origins', value: values.allowedOrigins, placeholder: 'https://www.example.com', hint: 'The sites that may post to this form, one a line (scheme and host, no path). Empty: any site.', problem: problems.allowedOrigins })}
    ${line({ name: 'redirectUrl', label: 'After sending, go to', value: values.redirectUrl, placeholder: 'https://www.example.com/thanks', hint: 'An address (https://…) or a path of the site (/thanks) a browser is sent to after a successful post. Empty: a plain thank-you page.', problem: problems.redirectUrl })}
    ${checkbox('storeIpAddress', 'Keep the sender’s IP address and browser', values.storeIpAddress, 'Useful to trace abuse, but personal data: untick it to store neither with new submissions.')}
    ${line({ name: 'retentionDays', label: 'Delete submissions after (days)', value: values.retentionDays, inputmode: 'numeric', hint: 'Submissions older than this are deleted automatically within the hour, and the audit log says how many; empty keeps them until deleted by hand.', problem: problems.retentionDays })}
    ${lines({ name: 'notifyEmails', label: 'Email each new submission to', value: values.notifyEmails, placeholder: 'office@example.com', hint: 'One address a line; spam is never mailed.', problem: problems.notifyEmails, ...(noMail ? { after: noMail } : {}) })}
    <div class="actions"><button type="submit" class="button primary">Save intake settings</button><a class="button secondary" href="${url`/admin/forms/${form.id}/intake`}">Discard changes</a></div>
  </form>
</section>`,
  })
}

/** A block of code to copy, with the copy button the script shows. */
function codeBlock(id: string, label: string, what: string, code: string): SafeHtml {
  return html`<div class="code-block">
  <div class="code-head"><h3 id="${id}-label">${label}</h3>
  <button type="button" class="button secondary small" data-copy-target="${id}" data-copy-status="${id}-status" aria-label="Copy the ${what}" hidden>Copy</button>
  <span id="${id}-status" class="copy-status" role="status" aria-live="polite"></span></div>
  <pre tabindex="0" aria-labelledby="${id}-label"><code id="${id}">${code}</code></pre>
</div>`
}

/** The code a site pastes to take this form's submissions, and what it needs to know first. */
export function embedPage(input: {
  session: AdminSession
  form: AdminForm
  action: string
  enabled: boolean
  allowedOrigins: readonly string[]
  fieldCount: number
  snippet: string
  fetchCode: string
}): SafeHtml {
  const { session, form } = input
  const fieldsHref = url`/admin/forms/${form.id}/fields`
  const intakeHref = url`/admin/forms/${form.id}/intake`
  const off =
    !input.enabled || !form.isActive
      ? html`<div class="alert warning" role="status">This form does not take submissions yet: ${
          input.enabled ? 'it is inactive' : html`turn on <a href="${intakeHref}">Take submissions</a>`
        }. Until then, posts are answered “not found”.</div>`
      : ''
  return layout({
    title: `Embed ${form.title}`,
    session,
    section: 'forms',
    body: html`${formHead(form, 'embed', session, `Embed “${form.title}”`)}
${off}
<section class="panel">
  <h2>HTML form</h2>
  <p>Paste this where the form should appear on the site. It posts to <code>${input.action}</code>; after a post the
  visitor sees a thank-you page, or the page set under <a href="${intakeHref}">Intake</a>.
  ${input.fieldCount === 0 ? html`It has no inputs yet: <a href="${fieldsHref}">define the fields</a>, or write your own.` : html`It has one input for each of the ${input.fieldCount === 1 ? 'form’s field' : `form’s ${input.fieldCount} fields`} (<a href="${fieldsHref}">Fields</a>); style it as you like.`}
  The hidden <code>_gotcha</code> input is a trap for bots: keep it, and keep it empty.</p>
  ${codeBlock('embed-html', 'HTML form', 'HTML form', input.snippet)}
</section>
<section class="panel">
  <h2>Sending it with a script (JSON)</h2>
  <p>To stay on the page, add this after the form: it sends the form as JSON with <code>fetch</code> and shows the answer
  in place. ${
    input.allowedOrigins.length === 0
      ? 'Any site may post to this form.'
      : html`Only ${input.allowedOrigins.map((origin, index) => html`${index === 0 ? '' : ', '}<code>${origin}</code>`)} may post to it and read the answers.`
  } A site whose Content-Security-Policy forbids inline scripts can put it in a file of its own.</p>
  ${codeBlock('embed-fetch', 'Script', 'script', input.fetchCode)}
</section>`,
  })
}

/** A form's spam: what the honeypot caught, to release into the inbox or delete. */
export function spamPage(input: {
  session: AdminSession
  form: AdminForm
  spam: PageOf<SpamSubmission>
  page: number
  pageSize: number
  canManage: boolean
}): SafeHtml {
  const { session, form, spam } = input
  const card = (item: SpamSubmission) => {
    const entries = Object.entries(item.data)
    const value = (data: unknown) => (typeof data === 'string' ? data : JSON.stringify(data))
    return html`<article class="submission" id="spam-${item.id}" aria-labelledby="spam-${item.id}-title">
  <header><h2 id="spam-${item.id}-title">${timestamp(item.createdAt)}</h2></header>
  ${
    entries.length === 0
      ? html`<p class="muted">No fields were submitted.</p>`
      : html`<dl class="data">${entries.map(([name, data]) => html`<dt>${name}</dt><dd>${value(data)}</dd>`)}</dl>`
  }
  <details>
    <summary>Where it came from</summary>
    <dl class="meta">
      <dt>IP address</dt><dd>${item.ipAddress ?? '—'}</dd>
      <dt>Browser</dt><dd>${item.userAgent ?? '—'}</dd>
      <dt>Referrer</dt><dd>${item.referrer ?? '—'}</dd>
    </dl>
  </details>
  ${
    input.canManage
      ? html`<div class="actions">
    ${postButton({ action: url`/admin/spam/${item.id}/not-spam`, csrf: session.csrfToken, label: 'Not spam', ariaLabel: `Not spam: move the post of ${item.createdAt} to the inbox` })}
    ${postButton({ action: url`/admin/spam/${item.id}/delete`, csrf: session.csrfToken, label: 'Delete', variant: 'danger', ariaLabel: `Delete the spam of ${item.createdAt}` })}
  </div>`
      : ''
  }
</article>`
  }
  return layout({
    title: `Spam of ${form.title}`,
    session,
    section: 'forms',
    body: html`${formHead(form, 'spam', session, `Spam to “${form.title}”`)}
<p class="lead">Posts that filled in the hidden <code>_gotcha</code> trap: the sender was thanked as usual, but they are kept out
of the inbox, the API and notifications, and deleted after ${SPAM_RETENTION_DAYS} days. “Not spam” moves one into the inbox, unread.</p>
${
  spam.total === 0
    ? emptyState('No spam', 'Nothing caught by the trap is waiting here.')
    : html`<p>${spam.total} caught post${spam.total === 1 ? '' : 's'}, newest first.</p>
<div class="submissions">${spam.items.map(card)}</div>
${pagination({ page: input.page, pageSize: input.pageSize, total: spam.total, href: (page) => url`/admin/forms/${form.id}/spam?page=${page}` })}`
}`,
  })
}
