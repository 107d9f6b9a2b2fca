/** A JSON object as `JSON.parse` makes them. */
export type JsonObject = Record<string, unknown>

/** A plain object, as `JSON.parse` makes them; a `Date` or a `Map` handed to `importRecords` is not one. */
export function isObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** What a value is, for a problem's `(got …)`: `an array`, `null`, `a Date`, `a number`. */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object')
    return isObject(value) ? 'an object' : `a ${value.constructor?.name ?? 'object'}`
  return `a ${typeof value}`
}

/** The text without the byte-order mark some editors put first. */
export const stripBom = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)

/**
 * `JSON.parse`'s complaint and where it happened. V8 gives an offset for some errors and only a
 * snippet for others, so the offset is found by scanning the text again (only ever after a failure).
 */
export function locateSyntaxError(
  text: string,
  error: unknown,
): { reason: string; line?: number; column?: number } {
  const raw = error instanceof Error ? error.message : String(error)
  const reason = raw.replace(/ in JSON at position \d+.*$/s, '').replace(/, (\.\.\.)?".*$/s, '')
  const offset = jsonErrorOffset(text)
  if (offset < 0) return { reason }
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return { reason, line, column: offset - lineStart + 1 }
}

/** The offset of the first JSON syntax error in `text`, or -1 if there is none. */
function jsonErrorOffset(text: string): number {
  let i = 0
  const skipSpace = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r'))
      i++
  }
  const expect = (char: string): boolean => {
    skipSpace()
    if (text[i] !== char) return false
    i++
    return true
  }
  const string = (): boolean => {
    if (text[i] !== '"') return false
    i++
    while (i < text.length) {
      const code = text.charCodeAt(i)
      if (code === 0x22) {
        i++
        return true
      }
      if (code < 0x20) return false
      if (code === 0x5c) {
        const escaped = text[i + 1]
        if (escaped === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return false
          i += 6
        } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) {
          i += 2
        } else {
          i++
          return false
        }
      } else {
        i++
      }
    }
    return false
  }
  const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
  const value = (): boolean => {
    skipSpace()
    const char = text[i]
    if (char === '"') return string()
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']'
      i++
      skipSpace()
      if (text[i] === close) {
        i++
        return true
      }
      for (;;) {
        if (close === '}') {
          skipSpace()
          if (!string() || !expect(':')) return false
        }
        if (!value()) return false
        skipSpace()
        if (text[i] === ',') i++
        else return expect(close)
      }
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length
        return true
      }
    }
    number.lastIndex = i
    if (!number.test(text)) return false
    i = number.lastIndex
    return true
  }
  try {
    if (!value()) return i
  } catch {
    return -1 // nesting deep enough to overflow the stack: give the reason without a position
  }
  skipSpace()
  return i < text.length ? i : -1
}
