import { escapeHtml } from '../html.js'
import type { FieldDefinition, FieldType } from '../resources/form.js'

/**
 * The HTML a site pastes to take a form's submissions: a plain `<form>` posting to Lectern, one
 * input per defined field, the honeypot, a button; and a script that sends the same form as JSON.
 * Both are text to copy, built here with every value escaped (a label is data, never markup).
 */

/** The input type of each field type; those not listed are a textarea, a select or a checkbox. */
const INPUT_TYPES: Partial<Record<FieldType, string>> = {
  text: 'text',
  email: 'email',
  url: 'url',
  tel: 'tel',
  number: 'number',
  date: 'date',
}

/** Types whose value is free text, so that `maxlength` means something to the browser. */
const TEXT_TYPES: ReadonlySet<FieldType> = new Set(['text', 'textarea', 'email', 'url', 'tel'])

/** The id of the snippet's `<form>`, which the JSON example finds it by. */
export const embedFormId = (formId: string) => `lectern-${formId}`

function fieldMarkup(field: FieldDefinition, id: string): string {
  const name = escapeHtml(field.name)
  const label = `<label for="${id}">${escapeHtml(field.label)}</label>`
  const required = field.required ? ' required' : ''
  const maxlength =
    field.maxLength !== null && TEXT_TYPES.has(field.type) ? ` maxlength="${field.maxLength}"` : ''
  switch (field.type) {
    case 'checkbox':
      return `  <p>\n    <input id="${id}" name="${name}" type="checkbox" value="yes"${required}>\n    ${label}\n  </p>`
    case 'textarea':
      return `  <p>\n    ${label}\n    <textarea id="${id}" name="${name}" rows="5"${required}${maxlength}></textarea>\n  </p>`
    case 'select': {
      const options = (field.options ?? []).map((option) => `      <option>${escapeHtml(option)}</option>`)
      return `  <p>\n    ${label}\n    <select id="${id}" name="${name}"${required}>\n      <option value="">Choose…</option>\n${options.join('\n')}\n    </select>\n  </p>`
    }
    default: {
      // A decimal number may have a fraction: without `step="any"` the browser refuses one.
      const step = field.type === 'number' ? ' step="any"' : ''
      return `  <p>\n    ${label}\n    <input id="${id}" name="${name}" type="${INPUT_TYPES[field.type]}"${required}${maxlength}${step}>\n  </p>`
    }
  }
}

/** The `<form>` to paste: it works as it is, posting to `action` and landing on the thank-you page. */
export function embedSnippet(input: {
  formId: string
  title: string
  action: string
  fields: readonly FieldDefinition[]
}): string {
  const formId = embedFormId(input.formId)
  const fields =
    input.fields.length === 0
      ? ['  <!-- Your fields here: Lectern keeps every field posted, under its name. -->']
      : input.fields.map((field, index) => fieldMarkup(field, `${formId}-${index + 1}`))
  return [
    `<!-- “${escapeHtml(input.title)}”: submissions go to Lectern. -->`,
    `<form id="${formId}" action="${escapeHtml(input.action)}" method="post">`,
    ...fields,
    '  <!-- A trap for bots, hidden from people and from screen readers: a post that fills it in is kept as spam. -->',
    '  <div aria-hidden="true" style="position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden">',
    `    <label for="${formId}-gotcha">Leave this empty</label>`,
    `    <input id="${formId}-gotcha" name="_gotcha" type="text" tabindex="-1" autocomplete="off">`,
    '  </div>',
    '  <button type="submit">Send</button>',
    '</form>',
    '',
  ].join('\n')
}

/**
 * A script for JSON mode, placed after the snippet's form: it sends the form with `fetch` and says
 * on the page what happened, the visitor staying where they are.
 */
export function fetchExample(formId: string): string {
  const id = embedFormId(formId)
  return `<p id="${id}-status" role="status"></p>
<script>
  document.getElementById('${id}').addEventListener('submit', async (event) => {
    event.preventDefault()
    const form = event.currentTarget
    const status = document.getElementById('${id}-status')
    // A name given twice (checkboxes sharing one) is sent as a list.
    const data = {}
    for (const [name, value] of new FormData(form))
      data[name] = name in data ? [].concat(data[name], value) : value
    try {
      const response = await fetch(form.action, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(data),
      })
      const answer = await response.json()
      if (response.ok) {
        form.reset()
        status.textContent = 'Thank you: your submission has been received.'
      } else {
        const problems = Object.entries(answer.fields ?? {}).map(([name, problem]) => name + ' ' + problem)
        status.textContent = problems.length > 0 ? problems.join('; ') : answer.message
      }
    } catch {
      status.textContent = 'Your submission could not be sent. Please try again.'
    }
  })
</script>
`
}
