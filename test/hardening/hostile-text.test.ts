import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ImportError } from '../../src/services/import/index.js'
import { buildApiKey } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'

/** `[[[…]]]` `depth` deep, as text: built as a string, since an object that deep cannot be stringified. */
const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

describe('hostile text in imports', () => {
  let ctx: TestContext

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
  })
  afterAll(() => ctx.close())

  const importBytes = async (name: string, content: Buffer | string) => {
    const file = join(ctx.dir, name)
    writeFileSync(file, content)
    return ctx.services.importer.importFile(file).then(
      () => undefined,
      (error: unknown) => error,
    )
  }
  const problemsOf = (error: unknown) => {
    expect(error).toBeInstanceOf(ImportError)
    return (error as ImportError).problems
  }
  const stored = async () => (await ctx.database.db.selectFrom('forms').select('title').execute()).length

  it('refuses an NDJSON line that is not UTF-8 by its number, rather than replacing the bytes', async () => {
    const content = Buffer.concat([
      Buffer.from('{"kind":"form","title":"Fine"}\n{"kind":"form","title":"Caf'),
      Buffer.from([0xe9]), // Latin-1 é: not UTF-8
      Buffer.from('"}\n{"kind":"form","title":"Also fine"}\n'),
    ])
    expect(problemsOf(await importBytes('latin1.ndjson', content))).toEqual([
      'line 2: is not valid UTF-8 text (the file must be UTF-8)',
    ])
    expect(await stored()).toBe(0)
  })

  it('refuses a JSON file that is not UTF-8, naming the line', async () => {
    const content = Buffer.concat([
      Buffer.from('{\n  "forms": [\n    {"title": "Caf'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}\n  ]\n}\n'),
    ])
    expect(problemsOf(await importBytes('latin1.json', content))).toEqual([
      'the file is not valid UTF-8 text at line 3',
    ])
  })

  it('refuses lone surrogates in text, field names and data, naming the line and field', async () => {
    const lines = [
      '{"kind":"form","id":"form_s","title":"A\\ud800B"}',
      '{"kind":"form","id":"form_t","title":"Fine"}',
      '{"kind":"submission","formId":"form_t","data":{"message":"\\udc00"}}',
      '{"kind":"submission","formId":"form_t","data":{"\\ud83d":"x"}}',
      // A surrogate pair is one character (an emoji) and is fine.
      '{"kind":"submission","formId":"form_t","data":{"mood":"\\ud83d\\ude00"}}',
    ]
    expect(problemsOf(await importBytes('surrogates.ndjson', lines.join('\n')))).toEqual([
      'line 1 (form): title must not contain lone UTF-16 surrogates (not valid Unicode text)',
      'line 3 (submission): data must not hold strings that contain lone UTF-16 surrogates (not valid Unicode text) (at message)',
      'line 4 (submission): data must not hold field names that contain lone UTF-16 surrogates (not valid Unicode text)',
    ])
  })

  it('refuses data nested 5,000 deep with a located error, not a stack overflow', async () => {
    const lines = [
      '{"kind":"form","id":"form_d","title":"Deep"}',
      `{"kind":"submission","formId":"form_d","data":{"x":${deepArray(5_000)}}}`,
      `{"kind":"submission","formId":"form_d","data":{"x":${deepArray(200_000)}}}`,
    ]
    const problems = problemsOf(await importBytes('deep.ndjson', lines.join('\n')))
    expect(problems).toHaveLength(2)
    expect(problems[0]).toMatch(
      /^line 2 \(submission\): data must not be nested more than 20 levels deep \(at x/,
    )
    expect(problems[1]).toMatch(/^line 3 \(submission\): data must not be nested more than 20 levels deep/)
    expect(problems.join('\n')).not.toContain('call stack')
  })

  it('refuses deep nesting in a JSON file and in a field that wants text, located', async () => {
    const document = `{"forms":[{"title":${deepArray(5_000)}}],"submissions":[{"formId":"f","data":{"a":${deepArray(5_000)}}}]}`
    const problems = problemsOf(await importBytes('deep.json', document))
    expect(problems).toEqual([
      'forms[0].title: must be a string (got an array)',
      expect.stringMatching(/^submissions\[0\]\.data: must not be nested more than 20 levels deep/),
      "submissions[0].formId: 'f' does not exist",
    ])
  })

  it('refuses malformed JSON nested 100,000 deep with the reason, not a stack overflow', async () => {
    const line = `{"kind":"form","title":${'['.repeat(100_000)}}`
    const problems = problemsOf(await importBytes('broken-deep.ndjson', line))
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^line 1: not valid JSON/)
    expect(problems[0]).not.toContain('call stack')
  })

  it('serves imported text with non-ASCII characters unchanged over the API', async () => {
    const error = await importBytes(
      'unicode.ndjson',
      '{"kind":"form","id":"form_u","title":"Grüße 😀 — 東京"}\n',
    )
    expect(error).toBeUndefined()
    const key = await buildApiKey(ctx.database.db)
    const res = await ctx.app.inject({ url: '/api/v1/forms', headers: { authorization: key.authorization } })
    expect(res.json().data).toEqual([{ id: 'form_u', title: 'Grüße 😀 — 東京', description: null }])
  })
})
