// Small enhancements for the Lectern dashboard. Every page works without them: they are loaded
// from this file because the Content-Security-Policy allows no inline script.

// Copy buttons: <button data-copy-target="element id" data-copy-status="status id">, copying an
// input's value or an element's text. Those that are hidden without the script are shown by it.
for (const button of document.querySelectorAll('[data-copy-target][hidden]')) button.hidden = false
const selectWhole = (element) => {
  if (element instanceof HTMLInputElement) {
    element.focus()
    element.select()
    return
  }
  const range = document.createRange()
  range.selectNodeContents(element)
  window.getSelection()?.removeAllRanges()
  window.getSelection()?.addRange(range)
}
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy-target]') : null
  if (!button) return
  const source = document.getElementById(button.getAttribute('data-copy-target'))
  const status = document.getElementById(button.getAttribute('data-copy-status'))
  if (!source) return
  const text = source instanceof HTMLInputElement ? source.value : (source.textContent ?? '')
  let copied = false
  try {
    await navigator.clipboard.writeText(text)
    copied = true
  } catch {
    // Without the asynchronous clipboard (an insecure origin), fall back to selecting and copying.
    selectWhole(source)
    copied = document.execCommand('copy')
  }
  button.textContent = copied ? 'Copied' : 'Copy'
  if (status) {
    status.textContent = copied
      ? 'Copied to the clipboard.'
      : 'Could not copy automatically: the text is selected, press Ctrl+C (or ⌘C) to copy it.'
  }
})

// One-time secrets are selected whole when focused, ready to copy by hand.
for (const input of document.querySelectorAll('input[readonly]')) {
  input.addEventListener('focus', () => input.select())
}

// A form's error summary takes the focus, so that screen readers read it first.
const summary = document.querySelector('[data-focus]')
if (summary instanceof HTMLElement) summary.focus()

// Times arrive in UTC; shown in the reader's own zone (the date and the time each kept on one
// line, so a narrow column breaks between them), with the UTC time kept on hover.
const localDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })
const localClock = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' })
const localZone = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' })
const part = (text) => {
  const span = document.createElement('span')
  span.className = 'nowrap'
  span.textContent = text
  return span
}
for (const element of document.querySelectorAll('time[datetime]')) {
  const at = new Date(element.getAttribute('datetime'))
  if (Number.isNaN(at.getTime())) continue
  const zone = localZone.formatToParts(at).find((piece) => piece.type === 'timeZoneName')?.value ?? ''
  element.replaceChildren(part(localDate.format(at)), ' ', part(`${localClock.format(at)} ${zone}`.trim()))
  element.classList.add('local')
}

// The field editor: a row asks for options only when its type is a choice from a list (or when
// options were typed, so that none is hidden that the checks would then refuse).
for (const row of document.querySelectorAll('.field-row')) {
  const type = row.querySelector('select[name^="type-"]')
  const options = row.querySelector('.field-options')
  const text = options?.querySelector('textarea')
  if (!(type instanceof HTMLSelectElement) || !(options instanceof HTMLElement) || !text) continue
  const show = () => {
    options.hidden = type.value !== 'select' && text.value.trim() === ''
  }
  type.addEventListener('change', show)
  show()
}
