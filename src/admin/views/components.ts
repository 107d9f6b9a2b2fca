import { html, type Renderable, type SafeHtml, type SafeUrl } from '../../html.js'
import type { Flash } from '../../services/sessions.js'
import { CSRF_FIELD } from '../security.js'

export const csrfField = (token: string) => html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`

/**
 * A button that posts to `action`: every change is a POST carrying the CSRF token, never a link.
 * `fields` are sent along as hidden inputs.
 */
export function postButton(input: {
  action: SafeUrl
  csrf: string
  label: string
  fields?: Record<string, string>
  variant?: 'primary' | 'secondary' | 'danger'
  /** The accessible name, when the visible label alone would be ambiguous in a list. */
  ariaLabel?: string
}): SafeHtml {
  const hidden = Object.entries(input.fields ?? {}).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )
  return html`<form class="inline" method="post" action="${input.action}">${csrfField(input.csrf)}${hidden}<button type="submit" class="button ${input.variant ?? 'secondary'}"${input.ariaLabel ? html` aria-label="${input.ariaLabel}"` : ''}>${input.label}</button></form>`
}

/** The message the previous request left (after a redirect), announced to screen readers. */
export function flashMessage(flash: Flash | null): SafeHtml {
  if (!flash) return html``
  return flash.kind === 'error'
    ? html`<div class="alert error" role="alert">${flash.text}</div>`
    : html`<div class="alert success" role="status">${flash.text}</div>`
}

/**
 * A form's id, as the API's addresses need it (`/api/v1/forms/{id}/submissions`): selectable text,
 * and a copy button that the script shows only where it can copy.
 */
export function formIdLine(id: string): SafeHtml {
  return html`<p class="id-line"><span class="muted">Form id for the API</span> <code id="form-id">${id}</code>
  <button type="button" class="button secondary small" data-copy-target="form-id" data-copy-status="form-id-status" aria-label="Copy the form id" hidden>Copy</button>
  <span id="form-id-status" class="copy-status" role="status" aria-live="polite"></span></p>`
}

/** The problems that stopped a form, above the form; focused by the script so they are read first. */
export function errorSummary(problems: readonly string[]): SafeHtml {
  if (problems.length === 0) return html``
  return html`<div class="alert error" role="alert" tabindex="-1" data-focus>
  <h2>${problems.length === 1 ? 'There is a problem' : `There are ${problems.length} problems`}</h2>
  <ul>${problems.map((problem) => html`<li>${problem}</li>`)}</ul>
</div>`
}

/**
 * A timestamp as people read it (`2024-01-05 10:00 UTC`), machine-readable in `datetime`, the exact
 * UTC time on hover. The script rewrites the text in the browser's own time zone (the server cannot
 * know it); without the script the UTC text stands.
 */
export function timestamp(value: string | null, empty = 'Never'): SafeHtml {
  if (value === null) return html`<span class="muted">${empty}</span>`
  return html`<time datetime="${value}" title="${value.slice(0, 10)} ${value.slice(11, 19)} UTC"><span class="nowrap">${value.slice(0, 10)}</span> <span class="nowrap">${value.slice(11, 16)} UTC</span></time>`
}

export function badge(text: string, tone: 'good' | 'neutral' | 'warn' | 'bad'): SafeHtml {
  return html`<span class="badge ${tone}">${text}</span>`
}

/** What a list shows when it has nothing in it: what the list is for, and how to fill it. */
export function emptyState(title: string, text: Renderable, action?: SafeHtml): SafeHtml {
  return html`<div class="empty"><h2>${title}</h2><p>${text}</p>${action ?? ''}</div>`
}

/**
 * The page numbers a pager shows: the first, the last, and two either side of the current one, with
 * `null` where numbers are left out (so 1,000 pages show as `1 … 498 499 500 501 502 … 1000`).
 */
export function pageNumbers(page: number, pages: number): (number | null)[] {
  const shown = new Set([1, pages])
  for (let n = page - 2; n <= page + 2; n++) if (n >= 1 && n <= pages) shown.add(n)
  const sorted = [...shown].sort((a, b) => a - b)
  const out: (number | null)[] = []
  for (const n of sorted) {
    const last = out.at(-1)
    if (typeof last === 'number' && n - last === 2) out.push(n - 1)
    else if (typeof last === 'number' && n - last > 2) out.push(null)
    out.push(n)
  }
  return out
}

/**
 * A paginated list's pager: previous and next, numbered pages around the current one, and a "go to
 * page" box. The box is a GET form to the same address, carrying the view's other parameters (read
 * from `href`'s own address, so the pager needs nothing more than the links do).
 */
export function pagination(input: {
  page: number
  pageSize: number
  total: number
  href: (page: number) => SafeUrl
}) {
  const pages = Math.max(1, Math.ceil(input.total / input.pageSize))
  if (pages <= 1 && input.page <= 1) return html``
  const previous =
    input.page > 1 ? html`<a rel="prev" href="${input.href(input.page - 1)}">← Previous</a>` : ''
  const next = input.page < pages ? html`<a rel="next" href="${input.href(input.page + 1)}">Next →</a>` : ''
  const numbers = pageNumbers(input.page, pages).map((n) =>
    n === null
      ? html`<li aria-hidden="true">…</li>`
      : n === input.page
        ? html`<li><a href="${input.href(n)}" aria-current="page" aria-label="Page ${n}, current">${n}</a></li>`
        : html`<li><a href="${input.href(n)}" aria-label="Page ${n}">${n}</a></li>`,
  )
  const target = new URL(input.href(1).value, 'http://lectern.invalid')
  const kept = [...target.searchParams].filter(([name]) => name !== 'page')
  const jump =
    pages > 1
      ? html`<form method="get" action="${target.pathname}" class="jump">${kept.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}<label for="jump-page">Go to page</label> <input id="jump-page" name="page" type="number" min="1" max="${pages}" value="${input.page}" inputmode="numeric"> <button type="submit" class="button secondary small">Go</button></form>`
      : ''
  return html`<nav class="pagination" aria-label="Pages">${previous}<span>Page ${input.page} of ${pages}</span>${next}<ol class="page-numbers">${numbers}</ol>${jump}</nav>`
}

/**
 * A table that turns into a list of cards on narrow screens: each cell carries its column's name,
 * which the stylesheet shows beside the value when the header row is hidden. A cell's content is
 * one element, so that a badge and its text stay together beside the name rather than under it.
 */
export function table(input: {
  caption: string
  columns: readonly string[]
  rows: readonly (readonly Renderable[])[]
  /** Optional HTML id per row (to link to a row). */
  rowIds?: readonly string[]
}): SafeHtml {
  return html`<div class="table-wrap"><table class="responsive">
  <caption class="visually-hidden">${input.caption}</caption>
  <thead><tr>${input.columns.map((column) => html`<th scope="col">${column}</th>`)}</tr></thead>
  <tbody>${input.rows.map(
    (cells, index) =>
      html`<tr${input.rowIds ? html` id="${input.rowIds[index]}"` : ''}>${cells.map((cell, column) => html`<td data-label="${input.columns[column]}"><div class="cell">${cell}</div></td>`)}</tr>`,
  )}</tbody>
</table></div>`
}

/**
 * What ties a field to its hint and its problem: the ids `aria-describedby` names, and the markup
 * that goes above the control. A field with a problem says it there, beside itself, and is marked
 * `aria-invalid`, so that a screen reader announces both when the field takes the focus.
 */
function described(id: string, hint: string | undefined, problem: string | undefined) {
  const ids = [hint ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter((item) => item !== '')
  return {
    notes: html`${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}${problem ? html`<p class="field-problem" id="${id}-problem">${problem}</p>` : ''}`,
    attributes: html`${ids.length > 0 ? html` aria-describedby="${ids.join(' ')}"` : ''}${problem ? html` aria-invalid="true"` : ''}`,
  }
}

/** A labelled text input with its hint; `problem` marks it invalid and is said beside it. */
export function textField(input: {
  name: string
  label: string
  value?: string
  type?: 'text' | 'email' | 'password' | 'date'
  hint?: string
  problem?: string
  required?: boolean
  autocomplete?: string
  autofocus?: boolean
  maxlength?: number
  placeholder?: string
}): SafeHtml {
  const id = `field-${input.name}`
  const { notes, attributes } = described(id, input.hint, input.problem)
  return html`<div class="field">
  <label for="${id}">${input.label}</label>
  ${notes}
  <input id="${id}" name="${input.name}" type="${input.type ?? 'text'}" value="${input.value ?? ''}"${input.required ? html` required` : ''}${input.autocomplete ? html` autocomplete="${input.autocomplete}"` : ''}${input.autofocus ? html` autofocus` : ''}${input.maxlength ? html` maxlength="${input.maxlength}"` : ''}${input.placeholder ? html` placeholder="${input.placeholder}"` : ''}${attributes}>
</div>`
}

/** A labelled multi-line text box with its hint; `problem` marks it invalid and is said beside it. */
export function textArea(input: {
  name: string
  label: string
  value?: string
  hint?: string
  problem?: string
  rows?: number
  maxlength?: number
}): SafeHtml {
  const id = `field-${input.name}`
  const { notes, attributes } = described(id, input.hint, input.problem)
  return html`<div class="field">
  <label for="${id}">${input.label}</label>
  ${notes}
  <textarea id="${id}" name="${input.name}" rows="${input.rows ?? 4}"${input.maxlength ? html` maxlength="${input.maxlength}"` : ''}${attributes}>${input.value ?? ''}</textarea>
</div>`
}

/** A confirmation step for a change that cannot be undone: what will happen, then one clear button. */
export function confirmation(input: {
  heading: string
  consequences: Renderable
  action: SafeUrl
  csrf: string
  confirmLabel: string
  cancelHref: SafeUrl
}): SafeHtml {
  return html`<section class="panel confirm">
  <h1>${input.heading}</h1>
  ${input.consequences}
  <form method="post" action="${input.action}" class="actions">
    ${csrfField(input.csrf)}
    <button type="submit" class="button danger">${input.confirmLabel}</button>
    <a class="button secondary" href="${input.cancelHref}">Cancel</a>
  </form>
</section>`
}

/**
 * A button that switches something off when it is on, and on when it is off. `subject` completes its
 * accessible name ("Deactivate Marketing website"): in a list, the label alone would not say which.
 */
export function switchButton(input: {
  csrf: string
  subject: string
  isOn: boolean
  /** The labels that switch it off and on, e.g. `['Deactivate', 'Activate']`. */
  labels: readonly [off: string, on: string]
  /** One address taking the new state in `field`, or one address per direction. */
  action: SafeUrl | { off: SafeUrl; on: SafeUrl }
  field?: string
  /** Sent along, e.g. the list page to come back to. */
  fields?: Record<string, string>
}): SafeHtml {
  const label = input.isOn ? input.labels[0] : input.labels[1]
  const action = 'off' in input.action ? (input.isOn ? input.action.off : input.action.on) : input.action
  const fields = { ...(input.field ? { [input.field]: String(!input.isOn) } : {}), ...input.fields }
  return postButton({ action, csrf: input.csrf, label, fields, ariaLabel: `${label} ${input.subject}` })
}

/** A row's actions: edit (when it can be edited), its switch, and a link to confirm removing it. */
export function rowActions(input: {
  subject: string
  edit?: SafeUrl
  toggle: SafeHtml
  remove: { href: SafeUrl; label: string }
  /** Further actions after the others, e.g. a link to reset a password. */
  more?: SafeHtml
}): SafeHtml {
  const edit = input.edit
    ? html`<a class="button secondary" href="${input.edit}" aria-label="Edit ${input.subject}">Edit</a>`
    : ''
  return html`<div class="actions row-actions">${edit}${input.toggle}<a class="button danger" href="${input.remove.href}" aria-label="${input.remove.label} ${input.subject}…">${input.remove.label}…</a>${input.more ?? ''}</div>`
}
