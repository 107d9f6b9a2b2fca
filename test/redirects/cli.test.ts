import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exportRedirects, REDIRECT_EXPORT_FORMATS } from '../../src/services/redirects/exports.js'
import { createRedirectMatcher } from '../../src/services/redirects/matcher.js'
import { BIN, runCli, runCliProcess } from '../cli/run-cli.js'
import { createTestContext, type TestContext } from '../harness.js'
import { caseFile, casesFor, insertCaseRedirects } from './support.js'

describe('lectern redirects', () => {
  let ctx: TestContext
  const cli = (args: string[]) => runCli(args, { databaseUrl: ctx.databaseUrl })

  beforeAll(async () => {
    ctx = await createTestContext()
    await insertCaseRedirects(ctx.database.db)
  })
  afterAll(() => ctx.close())

  describe('match, on spec/redirect-cases.json', () => {
    it.each(casesFor('cli').map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      // `--` ends the options, so a target is never read as one.
      const result = await cli(['redirects', 'match', '--', c.target])
      if (c.expect === null) {
        expect(result.stdout, result.stderr).toBe('no redirect\n')
        expect(result.code).toBe(1)
      } else {
        expect(result.stdout, result.stderr).toBe(`${c.expect.status} ${c.expect.location}\n`)
        expect(result.code).toBe(0)
      }
    })
  })

  // A process test: the export streams to the binary's own stdout, a pipe here, with back-pressure.
  it('exports to stdout exactly what the exporter writes for the matcher', async () => {
    const result = await runCliProcess(['redirects', 'export', '--format', 'nginx'], {
      databaseUrl: ctx.databaseUrl,
    })
    expect(result.code).toBe(0)
    const expected = [...exportRedirects('nginx', createRedirectMatcher(caseFile.redirects).rules())].join('')
    expect(result.stdout).toBe(expected)
  })

  it('writes --output through a temporary file and leaves nothing else beside it', async () => {
    const file = join(ctx.dir, 'exports', 'redirects.json')
    mkdirSync(join(ctx.dir, 'exports'))
    writeFileSync(file, 'old content')
    const result = await cli(['redirects', 'export', '--format', 'json', '--output', file])
    expect(result.code).toBe(0)
    const written = JSON.parse(readFileSync(file, 'utf8')) as { fromPath: string; location: string }[]
    expect(written.find((r) => r.fromPath === '/chain-a')).toEqual({
      fromPath: '/chain-a',
      toPath: '/chain-c',
      type: 'permanent',
      status: 301,
      location: '/chain-c',
    })
    expect(readdirSync(join(ctx.dir, 'exports'))).toEqual(['redirects.json'])
  })

  it('refuses an unknown format, and a malformed host, with one clear line', async () => {
    const unknown = await cli(['redirects', 'export', '--format', 'iis'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain(
      'Allowed choices are csv, json, nginx, apache, caddy, netlify, vercel, cloudflare',
    )
    const badHost = await cli([
      'redirects',
      'export',
      '--format',
      'cloudflare',
      '--host',
      'www.example.com/x',
    ])
    expect(badHost.code).toBe(1)
    expect(badHost.stderr.trim()).toBe(
      "lectern: 'www.example.com/x' is not a host name (e.g. www.example.com)",
    )
  })

  it('writes every format with its flags alone, and says on stderr what a cloudflare file without --host lacks', async () => {
    const matcher = createRedirectMatcher(caseFile.redirects)
    // The eight formats, as the test above reads them in the list of allowed choices.
    for (const format of REDIRECT_EXPORT_FORMATS) {
      const result = await cli(['redirects', 'export', '--format', format])
      expect(result.code, `${format}: ${result.stderr}`).toBe(0)
      expect(result.stdout).toBe([...exportRedirects(format, matcher.rules())].join(''))
    }
    const cloudflare = await cli(['redirects', 'export', '--format', 'cloudflare'])
    expect(cloudflare.stdout.split('\n')[0]).toBe('/old,/new,301,TRUE,FALSE,FALSE,FALSE')
    expect(cloudflare.stderr.trim().split('\n')).toEqual([
      "lectern: warning: the cloudflare format needs the site's host name (e.g. www.example.com), because Bulk Redirects match whole URLs; this file names none: give it with --host before uploading it",
    ])
    const hosted = await cli(['redirects', 'export', '--format', 'cloudflare', '--host', 'www.example.com'])
    expect(hosted.stderr).toBe('')
    expect(hosted.stdout.split('\n')[0]).toBe('www.example.com/old,/new,301,TRUE,FALSE,FALSE,FALSE')
  })

  it('names the file it cannot write, in one line, when --output is in no folder', async () => {
    const file = join(ctx.dir, 'no-such-folder', 'redirects.conf')
    const result = await cli(['redirects', 'export', '--format', 'nginx', '--output', file])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      `lectern: cannot write ${file}: no folder ${join(ctx.dir, 'no-such-folder')}\n`,
    )
  })

  it('refuses --watch without --output', async () => {
    const result = await cli(['redirects', 'export', '--format', 'nginx', '--watch'])
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toBe('lectern: --watch needs --output <file>')
  })

  it('keeps the export current with --watch, runs --then after each change, survives its failure and stops on SIGTERM', async () => {
    const file = join(ctx.dir, 'watched.conf')
    const log = join(ctx.dir, 'then.log')
    // The command fails every time: the watcher must log that and carry on.
    const then = `echo ran >> '${log}'; exit 3`
    const child = spawn(
      process.execPath,
      [
        BIN,
        'redirects',
        'export',
        '--format',
        'nginx',
        '--output',
        file,
        '--watch',
        '--interval',
        '0.2',
        '--then',
        then,
      ],
      {
        env: { ...process.env, DATABASE_URL: ctx.databaseUrl, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const until = async (condition: () => boolean, what: string) => {
      for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 100))
      if (!condition()) throw new Error(`timed out waiting for ${what}; stderr: ${stderr}`)
    }
    const runs = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0)

    await until(() => runs() === 1, 'the first write')
    expect(readFileSync(file, 'utf8')).not.toContain('/watch-me')

    await ctx.services.redirects.createRedirect({ fromPath: '/watch-me', toPath: '/old' })
    await until(() => runs() === 2, 'the rewrite after a change')
    expect(readFileSync(file, 'utf8')).toContain(
      'location = "/watch-me" { absolute_redirect off; return 301 "/new$is_args$args"; }',
    )
    expect(stderr).toContain('--then command failed (exit status 3)')

    // A content change that leaves the redirects as they were rewrites nothing and runs nothing.
    await ctx.database.db
      .insertInto('forms')
      .values({
        id: 'form_watch',
        title: 'Watch',
        description: null,
        is_active: 1,
        created_at: '2024-01-05T10:00:00Z',
        updated_at: '2024-01-05T10:00:00Z',
      })
      .execute()
    await new Promise((r) => setTimeout(r, 1000))
    expect(runs()).toBe(2)

    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(stderr).toContain('stopped watching')
    expect(readdirSync(ctx.dir).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })
})
