/**
 * Cutting and encoding text for whatever builds a header value or a URL from text someone else
 * chose. JavaScript strings are UTF-16: cutting one at a code-unit count can split a surrogate
 * pair, and `encodeURIComponent` throws on the lone half that is left. These do neither.
 */

/** The first `max` code points of `text`: an astral character (an emoji) is kept whole or left out. */
export function firstCodePoints(text: string, max: number): string {
  if (text.length <= max) return text
  let end = 0
  for (let count = 0; count < max && end < text.length; count++)
    end += (text.codePointAt(end) as number) > 0xffff ? 2 : 1
  return text.slice(0, end)
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * `encodeURIComponent` that never throws: a lone surrogate (which is not UTF-8, and makes it throw)
 * is encoded as U+FFFD, as the WHATWG URL encoder and `TextEncoder` do.
 */
export function encodeUriComponentSafely(text: string): string {
  try {
    return encodeURIComponent(text)
  } catch {
    return encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD'))
  }
}
