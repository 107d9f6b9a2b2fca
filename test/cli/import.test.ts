import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { BULK_SUBMISSIONS } from '../../src/services/import/batches.js'
import { createMigratedTestDatabase, createTestContext, TEST_DIALECT, type TestContext } from '../harness.js'
import { BIN, runCli, runCliProcess } from './run-cli.js'

const execFileAsync = promisify(execFile)
/** What a redrawn terminal line starts with: a carriage return, then erase to the end of the line. */
const ERASE = '\r\x1b[K'

describe('lectern import', () => {
  let ctx: TestContext
  const cli = (args: string[]) => runCli(args, { databaseUrl: ctx.databaseUrl })
  const count = async (table: 'forms' | 'submissions' | 'redirects') =>
    Number(
      (
        await ctx.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )

  beforeEach(async () => {
    ctx = await createTestContext()
  })
  afterEach(() => ctx.close())

  it('imports a JSON file and reports what it wrote, warning about redirect chains', async () => {
    const file = join(ctx.dir, 'content.json')
    writeFileSync(
      file,
      JSON.stringify({
        forms: [{ id: 'form_contact', title: 'Contact', createdAt: '2024-01-05T12:00:00+02:00' }],
        submissions: [{ formId: 'form_contact', data: { email: 'a@example.com' } }],
        redirects: [
          { fromPath: '/a', toPath: '/b' },
          { fromPath: '/b', toPath: '/c' },
        ],
      }),
    )
    const result = await cli(['import', file])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Imported 1 form, 1 submission, 0 pages and 2 redirects')
    expect(result.stderr).toMatch(/warning: .*\/a.*\/c/)
    const form = await ctx.database.db.selectFrom('forms').selectAll().executeTakeFirstOrThrow()
    expect(form.created_at).toBe('2024-01-05T10:00:00Z')
  })

  // SQLite has no statement timeout; the server's 3 s one is PostgreSQL's.
  it.skipIf(TEST_DIALECT !== 'postgres')(
    'runs a bulk load whose statements outlast the statement timeout of a server',
    async () => {
      // The sorted move of the load is one INSERT into submissions: this makes it take 3.5 s.
      await sql`create function slow_insert() returns trigger language plpgsql
        as $$ begin perform pg_sleep(3.5); return null; end $$`.execute(ctx.database.db)
      await sql`create trigger slow_insert before insert on submissions
        for each statement execute function slow_insert()`.execute(ctx.database.db)
      const file = join(ctx.dir, 'bulk.ndjson')
      const lines = [JSON.stringify({ kind: 'form', id: 'form_bulk', title: 'Bulk' })]
      for (let i = 0; i < BULK_SUBMISSIONS; i++)
        lines.push(JSON.stringify({ kind: 'submission', formId: 'form_bulk', data: { i } }))
      writeFileSync(file, lines.join('\n'))
      const result = await cli(['import', file])
      expect(result.stderr).toBe('')
      expect(result.code).toBe(0)
      expect(await count('submissions')).toBe(BULK_SUBMISSIONS)
    },
  )

  it('streams an NDJSON file', async () => {
    const file = join(ctx.dir, 'content.ndjson')
    const lines = [JSON.stringify({ kind: 'form', id: 'form_big', title: 'Big' })]
    for (let i = 0; i < 3000; i++)
      lines.push(JSON.stringify({ kind: 'submission', formId: 'form_big', data: { i } }))
    writeFileSync(file, `${lines.join('\n')}\n`)
    const result = await cli(['import', file])
    expect(result.code).toBe(0)
    expect(await count('submissions')).toBe(3000)
  })

  it('writes nothing and lists every problem with its location when any record is bad', async () => {
    const file = join(ctx.dir, 'bad.ndjson')
    const lines = [JSON.stringify({ kind: 'form', id: 'form_ok', title: 'Fine' })]
    for (let i = 0; i < 500; i++)
      lines.push(JSON.stringify({ kind: 'submission', formId: 'form_ok', data: { i } }))
    lines.push(JSON.stringify({ kind: 'submission', formId: 'form_missing', data: { x: 1 } }))
    lines.push(JSON.stringify({ kind: 'redirect', fromPath: '//evil.example', toPath: '/x' }))
    writeFileSync(file, lines.join('\n'))

    const result = await cli(['import', file])
    expect(result.code).not.toBe(0)
    const [summary, ...problems] = result.stderr.trim().split('\n')
    expect(summary).toContain('nothing was written')
    expect(problems).toHaveLength(2)
    expect(problems[0]).toContain('line 502')
    expect(problems[0]).toContain('form_missing')
    expect(problems[1]).toContain('line 503')
    expect(await count('forms')).toBe(0)
    expect(await count('submissions')).toBe(0)
  })

  it('prints the warnings of a refused import too, before the refusal and its problems', async () => {
    const file = join(ctx.dir, 'refused.json')
    writeFileSync(
      file,
      JSON.stringify({
        forms: [
          { id: 'form_a', title: 'First' },
          { id: 'form_a', title: 'Second' },
        ],
        pages: [{ title: 'No path', slug: 'no-path' }],
      }),
    )
    const result = await cli(['import', file])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim().split('\n')).toEqual([
      "warning: forms[1]: id 'form_a' also appears at forms[0]; this later record wins",
      expect.stringMatching(/^lectern: Import refused: 1 problem, nothing was written \(database .+\)$/),
      '  - pages[0].path: is required',
    ])
    expect(await count('forms')).toBe(0)
  })

  it('says what it expected of a line or a file that is not JSON at all', async () => {
    const ndjson = join(ctx.dir, 'notes.ndjson')
    writeFileSync(ndjson, `${JSON.stringify({ kind: 'form', title: 'Fine' })}\n\nnot json\n`)
    const line = await cli(['import', ndjson])
    expect(line.code).not.toBe(0)
    expect(line.stderr.trim().split('\n')[1]).toBe(
      '  - line 3: not a JSON object: expected one JSON record per line, such as {"kind": "form", "title": "Contact"} (the line begins "not json")',
    )
    expect(line.stderr).not.toContain('Unexpected token')

    const json = join(ctx.dir, 'notes.json')
    writeFileSync(json, 'forms: Contact, Newsletter, and a very long list\n')
    const file = await cli(['import', json])
    expect(file.code).not.toBe(0)
    expect(file.stderr.trim().split('\n')[1]).toBe(
      '  - the file must hold a JSON object such as {"forms": [], "pages": []}, but it is not JSON (it begins "forms: Contact, Newslett…")',
    )
    expect(await count('forms')).toBe(0)
  })

  it('shows its progress on one line redrawn on a terminal, and none through a pipe or with --quiet', async () => {
    const file = join(ctx.dir, 'progress.ndjson')
    const lines = [JSON.stringify({ kind: 'form', id: 'form_p', title: 'Progress' })]
    for (let i = 0; i < 3000; i++)
      lines.push(JSON.stringify({ kind: 'submission', formId: 'form_p', data: { i } }))
    writeFileSync(file, lines.join('\n'))
    /** The import run under a pseudo-terminal (util-linux `script`), as from an interactive shell. */
    const onTerminal = async (databaseUrl: string, ...flags: string[]) => {
      const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`
      const command = [process.execPath, BIN, 'import', ...flags, file].map(quote).join(' ')
      const { stdout } = await execFileAsync('script', ['-qfec', command, '/dev/null'], {
        env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
      })
      return stdout
    }
    /** An empty database of its own, so that the three runs below can go at once. */
    const anotherDatabase = async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lectern-import-cli-'))
      const database = await createMigratedTestDatabase(dir)
      onTestFinished(async () => {
        await database.drop()
        rmSync(dir, { recursive: true, force: true })
      })
      return database.url
    }
    const [quietUrl, pipedUrl] = await Promise.all([anotherDatabase(), anotherDatabase()])

    const [shown, quiet, piped] = await Promise.all([
      onTerminal(ctx.databaseUrl),
      onTerminal(quietUrl, '--quiet'),
      // A process test, as all three are: whether stderr is a terminal is the process's own.
      runCliProcess(['import', file], { databaseUrl: pipedUrl }),
    ])
    expect(shown).toContain(`${ERASE}checking: `)
    const redraws = shown.split(ERASE)
    expect(redraws.some((line) => /^writing: [\d,]+ of 3,001 records \(\d+%\)/.test(line))).toBe(true)
    expect(shown).toContain(`${ERASE}finishing: ordering, indexing and committing 3,001 records`)
    // The line is erased before the summary, which starts on a clean line.
    expect(redraws.at(-1)).toMatch(/^Imported 1 form, 3000 submissions/)
    expect(await count('submissions')).toBe(3000)

    expect(quiet).toMatch(/^Imported 1 form, 3000 submissions/)
    expect(quiet).not.toContain(ERASE)

    expect(piped.code).toBe(0)
    expect(piped.stderr).toBe('')
    expect(piped.lines).toHaveLength(1)
    expect(piped.stdout).toMatch(/^Imported 1 form, 3000 submissions/)
    expect(piped.stdout).not.toContain(ERASE)
  })

  it('fails clearly for a missing file or an unsupported extension', async () => {
    const missing = await cli(['import', join(ctx.dir, 'nope.json')])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toMatch(/^lectern: /)
    const csv = join(ctx.dir, 'data.csv')
    writeFileSync(csv, 'a,b\n')
    const unsupported = await cli(['import', csv])
    expect(unsupported.code).not.toBe(0)
    expect(unsupported.stderr).toContain('.csv')
  })
})
