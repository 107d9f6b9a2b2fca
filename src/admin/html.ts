/**
 * Escaped HTML templates. `html` is a tagged template whose interpolations are escaped unless they
 * are themselves `html` results, so markup is built from trusted literals and escaped data only.
 * Views are plain TypeScript functions: the compiler checks every value a view uses.
 */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] as string)
}

/** A value a template may hold: markup, text, numbers, lists of either, or nothing. */
export type Renderable = SafeHtml | string | number | null | undefined | false | readonly Renderable[]

function render(value: Renderable): string {
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): SafeHtml {
  let out = strings[0] ?? ''
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '')
  })
  return new SafeHtml(out)
}
