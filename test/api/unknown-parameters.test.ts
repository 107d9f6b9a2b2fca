import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey } from '../factories.js'
import { listenLocally } from '../hardening/http-browser.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'

/** Code points of a name the warning repeats. */
const NAMED = 64

/** The names a `Lectern-Warning` repeats, decoded. */
function namesIn(warning: string | null): string[] {
  expect(warning).not.toBeNull()
  return Array.from((warning as string).matchAll(/'([^']*)'/g), (match) =>
    decodeURIComponent(match[1] as string),
  )
}

/** Its first `NAMED` code points: what the warning may repeat of a name. */
const shortened = (name: string) => Array.from(name).slice(0, NAMED).join('')

describe('the warning about unknown query parameters, over HTTP', () => {
  let ctx: TestContext
  let base: string
  let authorization: string

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    base = await listenLocally(ctx.app)
    authorization = (await buildApiKey(ctx.database.db)).authorization
  })
  afterAll(() => ctx.close())

  const list = (names: string[]) =>
    fetch(`${base}/api/v1/forms?${names.map((name) => `${encodeURIComponent(name)}=1`).join('&')}`, {
      headers: { authorization },
    })

  // The emoji starts at every position around the cut, so that the cut falls before it, between
  // its two UTF-16 halves, and after it.
  it.each(Array.from({ length: NAMED + 3 }, (_, start) => start))(
    'names a parameter whose emoji starts at code unit %i whole or not at all',
    async (start) => {
      const name = `${'a'.repeat(start)}😀${'b'.repeat(10)}`
      const res = await list([name])
      expect(res.status).toBe(200)
      expect(namesIn(res.headers.get('lectern-warning'))).toEqual([shortened(name)])
    },
  )

  it('names a parameter made of emoji only, keeping 64 of them', async () => {
    const res = await list(['🦄'.repeat(100)])
    expect(res.status).toBe(200)
    expect(namesIn(res.headers.get('lectern-warning'))).toEqual(['🦄'.repeat(NAMED)])
  })

  it('answers 200 with a readable warning for any names, astral characters included', async () => {
    const character = fc.oneof(
      fc.constantFrom('a', "'", 'é', '€', '😀', '𝄞', '🏳️‍🌈', '\u{10FFFF}'),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
    )
    const name = fc.array(character, { minLength: 1, maxLength: 80 }).map((parts) => parts.join(''))
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(name, { minLength: 1, maxLength: 3 }), async (names) => {
        const res = await list(names)
        expect(res.status).toBe(200)
        expect(namesIn(res.headers.get('lectern-warning'))).toEqual(names.map(shortened))
      }),
      { numRuns: 60 },
    )
  })
})
