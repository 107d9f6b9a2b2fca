import { isSafeEmail } from '../../resources/email-address.js'
import type { FieldDefinition } from '../../resources/form.js'

/**
 * The email sent for a new submission. Every value that reaches a header (the subject, Reply-To,
 * the recipients) is either stripped of control characters or checked against a strict address
 * pattern, so a submitted value can never add a header or a recipient.
 */

/** `text` on one line: control characters (CR, LF, tabs…) become spaces. */
export function oneLine(text: string, max = 200): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

export interface SubmissionMailInput {
  form: { id: string; title: string; fields: readonly FieldDefinition[] }
  submission: { id: string; data: Record<string, unknown>; createdAt: string }
  recipients: readonly string[]
  publicUrl?: string
}

export interface SubmissionMail {
  to: string[]
  subject: string
  text: string
  replyTo?: string
}

function show(value: unknown): string {
  if (Array.isArray(value)) return value.map(show).join(', ')
  if (value === null || value === undefined) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/**
 * The message for one submission: the form's title in the subject; in the body every field, those
 * the form defines first in their order (with their labels), then the rest as sent; a link to the
 * form's submissions in the dashboard when the public URL is known; Reply-To the first valid
 * `email`-typed field's value, else a field named `email`.
 */
export function submissionMail(input: SubmissionMailInput): SubmissionMail | null {
  const to = [...new Set(input.recipients.filter(isSafeEmail))]
  if (to.length === 0) return null
  const { form, submission } = input
  const defined = new Set(form.fields.map((field) => field.name))
  const lines: string[] = []
  const add = (label: string, value: unknown) => {
    const [first, ...rest] = show(value).split(/\r\n|\r|\n/)
    lines.push(`${oneLine(label, 200)}: ${first}`)
    for (const line of rest) lines.push(`  ${line}`)
  }
  for (const field of form.fields)
    if (field.name in submission.data) add(field.label || field.name, submission.data[field.name])
  for (const [name, value] of Object.entries(submission.data)) if (!defined.has(name)) add(name, value)
  const title = oneLine(form.title, 150) || form.id
  const text = [
    `A new submission to "${title}" arrived at ${submission.createdAt}.`,
    '',
    ...(lines.length > 0 ? lines : ['(no fields)']),
    '',
    `Submission: ${submission.id}`,
    ...(input.publicUrl
      ? [
          `See it in the dashboard: ${input.publicUrl.replace(/\/+$/, '')}/admin/forms/${encodeURIComponent(form.id)}/submissions`,
        ]
      : []),
    '',
  ].join('\n')
  const emailField = form.fields.find(
    (field) => field.type === 'email' && isSafeEmail(firstValue(submission.data[field.name])),
  )
  const replyTo = emailField
    ? firstValue(submission.data[emailField.name])
    : isSafeEmail(firstValue(submission.data.email))
      ? firstValue(submission.data.email)
      : undefined
  return {
    to,
    subject: `New submission: ${title}`,
    text,
    ...(typeof replyTo === 'string' ? { replyTo } : {}),
  }
}

function firstValue(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value
}
