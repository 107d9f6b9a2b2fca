import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DATA_LIMITS, FIELD_LIMITS, MAX_RECORD_BYTES } from '../../src/limits.js'
import { ImportError } from '../../src/services/import/index.js'
import { type DashboardClient, signedInClient, textOf } from '../admin/support.js'
import { buildForm, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'

/** `depth` objects nested in one another, innermost `{}`. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {}
  for (let i = 1; i < depth; i++) value = { a: value }
  return value
}

describe('length limits on every text field', () => {
  let ctx: TestContext
  let admin: DashboardClient

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    admin = (await signedInClient(ctx.app, ctx.database.db)).client
  })
  afterAll(() => ctx.close())

  const importLines = async (name: string, lines: string[]) => {
    const file = join(ctx.dir, name)
    writeFileSync(file, `${lines.join('\n')}\n`)
    return ctx.services.importer.importFile(file).then(
      () => undefined,
      (error: unknown) => error,
    )
  }
  const problemsOf = (error: unknown) => {
    expect(error).toBeInstanceOf(ImportError)
    return (error as ImportError).problems
  }

  it('imports text at every limit, and refuses one character more with the line and field', async () => {
    const at = (n: number) => 'x'.repeat(n)
    const accepted = await importLines('at-limits.ndjson', [
      JSON.stringify({ kind: 'form', id: 'form_long', title: at(200), description: at(5_000) }),
      JSON.stringify({ kind: 'page', title: at(200), slug: at(200), path: `/${at(2_047)}` }),
      JSON.stringify({
        kind: 'submission',
        formId: 'form_long',
        data: {},
        notes: at(10_000),
        userAgent: at(1_000),
        referrer: at(2_048),
        submittedBy: at(320),
        ipAddress: at(100),
      }),
    ])
    expect(accepted).toBeUndefined()

    const refused = await importLines('over-limits.ndjson', [
      JSON.stringify({ kind: 'form', title: at(201), description: at(5_001) }),
      JSON.stringify({ kind: 'page', title: 'T', slug: at(201), path: `/${at(2_048)}` }),
      JSON.stringify({
        kind: 'submission',
        formId: 'form_long',
        data: {},
        notes: at(10_001),
        userAgent: at(1_001),
      }),
      JSON.stringify({ kind: 'form', id: `form_${at(124)}`, title: 'Id too long' }),
    ])
    expect(problemsOf(refused)).toEqual([
      'line 1 (form): title must be at most 200 characters (got 201)',
      'line 1 (form): description must be at most 5000 characters (got 5001)',
      'line 2 (page): slug must be at most 200 characters (got 201)',
      'line 2 (page): path must be at most 2048 characters (got 2049)',
      'line 3 (submission): userAgent must be at most 1000 characters (got 1001)',
      'line 3 (submission): notes must be at most 10000 characters (got 10001)',
      'line 4 (form): id must be at most 128 characters (got 129)',
    ])
  })

  it('refuses data that is too large, too deep or has too many entries, naming the line', async () => {
    const many = Object.fromEntries(Array.from({ length: DATA_LIMITS.entries + 1 }, (_, i) => [`f${i}`, i]))
    const refused = await importLines('data.ndjson', [
      JSON.stringify({ kind: 'form', id: 'form_data', title: 'Data' }),
      JSON.stringify({ kind: 'submission', formId: 'form_data', data: { text: 'é'.repeat(33_000) } }),
      JSON.stringify({ kind: 'submission', formId: 'form_data', data: nested(DATA_LIMITS.depth + 1) }),
      JSON.stringify({ kind: 'submission', formId: 'form_data', data: many }),
      JSON.stringify({ kind: 'submission', formId: 'form_data', data: nested(DATA_LIMITS.depth) }),
    ])
    expect(problemsOf(refused)).toEqual([
      'line 2 (submission): data must be at most 65536 bytes once serialized as JSON',
      `line 3 (submission): data must not be nested more than 20 levels deep (at ${Array(20).fill('a').join('.')})`,
      'line 4 (submission): data must not hold more than 1000 fields and items in all',
    ])
  })

  it('refuses an NDJSON line longer than any valid record by its number, and goes on reading', async () => {
    const huge = JSON.stringify({ kind: 'form', title: 'x'.repeat(MAX_RECORD_BYTES + 10) })
    const refused = await importLines('huge-line.ndjson', [
      JSON.stringify({ kind: 'form', title: 'Fine' }),
      huge,
      JSON.stringify({ kind: 'form', title: '' }),
    ])
    expect(problemsOf(refused)).toEqual([
      `line 2: is longer than ${MAX_RECORD_BYTES} bytes, more than any valid record; it was not read`,
      'line 3 (form): title must not be empty',
    ])
  })

  it('refuses notes over the limit in the dashboard with a message, keeping the old notes', async () => {
    const form = await buildForm(ctx.database.db)
    const submission = await buildSubmission(ctx.database.db, { formId: form.id, notes: 'old' })
    const page = await admin.get(`/admin/forms/${form.id}/submissions`)
    expect(page.body).toContain(`maxlength="${FIELD_LIMITS.notes}"`)
    const res = await admin.post(`/admin/submissions/${submission.id}/notes`, {
      notes: 'n'.repeat(FIELD_LIMITS.notes + 1),
      page: '1',
    })
    expect(res.statusCode).toBe(303)
    const after = await admin.get(res.headers.location as string)
    expect(textOf(after)).toContain('Notes must be at most 10000 characters (got 10001)')
    const row = await ctx.database.db
      .selectFrom('submissions')
      .select('notes')
      .where('id', '=', submission.id)
      .executeTakeFirstOrThrow()
    expect(row.notes).toBe('old')
  })

  it('refuses key names and emails over their limits in the dashboard, beside the form', async () => {
    await admin.get('/admin/keys/new')
    const key = await admin.post('/admin/keys', { name: 'k'.repeat(FIELD_LIMITS.keyName + 1) })
    expect(key.statusCode).toBe(422)
    expect(textOf(key)).toContain('Key name must be 1 to 100 characters')

    await admin.get('/admin/users/new')
    const email = `${'e'.repeat(250)}@example.com`
    const user = await admin.post('/admin/users', { email, role: 'viewer' })
    expect(user.statusCode).toBe(422)
    expect(textOf(user)).toContain('is not a valid email address')
  })

  it('refuses a CSV row whose path is over the limit, with its line', async () => {
    await admin.get('/admin/redirects/import')
    const csv = `fromPath,toPath\n/ok,/fine\n/${'p'.repeat(FIELD_LIMITS.path)},/target\n`
    const res = await admin.postMultipart(
      '/admin/redirects/import',
      {},
      { file: { name: 'r.csv', content: csv } },
    )
    expect(res.statusCode).toBe(422)
    expect(textOf(res)).toContain('line 3')
    expect(textOf(res)).toContain('must be at most 2048 characters')
    const stored = await ctx.database.db.selectFrom('redirects').select('from_path').execute()
    expect(stored).toEqual([])
  })
})
