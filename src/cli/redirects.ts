import { spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { Readable } from 'node:stream'
import { type Command, CommanderError, InvalidArgumentError, Option } from 'commander'
import { ValidationError } from '../errors.js'
import type { RedirectApplier } from '../services/redirects/applier.js'
import {
  exportRedirects,
  REDIRECT_EXPORT_FORMATS,
  type RedirectExportFormat,
  type RedirectExportOptions,
  redirectExportHostWarning,
  redirectExportProblem,
} from '../services/redirects/exports.js'
import { withServices } from './context.js'
import { type CliIo, type CliOutput, writeLine } from './io.js'

interface ExportFlags {
  format: RedirectExportFormat
  output?: string
  host?: string
  watch?: boolean
  then?: string
  interval: number
}

/** `--interval`: seconds between content-version checks, at least 0.1. */
function intervalFlag(value: string): number {
  const seconds = Number(value)
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || seconds < 0.1 || seconds > 86_400)
    throw new InvalidArgumentError('the interval is a number of seconds from 0.1 to 86400.')
  return seconds
}

/** `lectern redirects …`: apply the redirects (as `redirects/matcher.ts` matches them) from the command line, and export them. */
export function registerRedirectCommands(program: Command, io: CliIo): void {
  const redirects = program
    .command('redirects')
    .description('apply and export redirects (see README, Applying redirects)')

  redirects
    .command('match')
    .description("print '<status> <location>' for a request target (exit 0), or 'no redirect' (exit 1)")
    .argument('<target>', 'a request path with an optional ?query, e.g. /old?page=2')
    .action(async (target: string) => {
      const matched = await withServices(io, async ({ redirectApplier }) => {
        const answer = (await redirectApplier.buildMatcher()).match(target)
        writeLine(io.stdout, answer ? `${answer.status} ${answer.location}` : 'no redirect')
        return answer !== null
      })
      // Commander's own way to end with a status, as after --help: `main` prints nothing more.
      if (!matched) throw new CommanderError(1, 'lectern.noRedirect', 'no redirect')
    })

  redirects
    .command('export')
    .description('write every active redirect, chains flattened, for a web server or platform')
    .addOption(
      new Option('--format <format>', 'what to write')
        .choices([...REDIRECT_EXPORT_FORMATS])
        .makeOptionMandatory(),
    )
    .option('--output <file>', 'write to this file, replaced atomically (default: stdout)')
    .option(
      '--host <host>',
      'the site host name (cloudflare: its source URLs are whole URLs; without it, bare paths and a warning)',
    )
    .option('--watch', 'keep running; rewrite the file whenever the redirects change (needs --output)')
    .option('--then <command>', 'a shell command to run after each write, e.g. "nginx -s reload"')
    .option('--interval <seconds>', 'with --watch, how often to check for changes', intervalFlag, 5)
    .action(async (flags: ExportFlags) => {
      const options: RedirectExportOptions = { host: flags.host }
      const problem = redirectExportProblem(flags.format, options)
      if (problem !== null) throw new ValidationError(problem)
      // Written all the same, its sources bare paths: said on stderr, where a script's log keeps it.
      const warning = redirectExportHostWarning(flags.format, options)
      if (warning !== null)
        writeLine(
          io.stderr,
          `lectern: warning: ${warning}; this file names none: give it with --host before uploading it`,
        )
      if ((flags.watch || flags.then !== undefined) && flags.output === undefined)
        throw new ValidationError(`--${flags.watch ? 'watch' : 'then'} needs --output <file>`)
      await withServices(io, async ({ redirectApplier }) => {
        if (flags.output === undefined) {
          const matcher = await redirectApplier.buildMatcher()
          await writeToStream(io.stdout, exportRedirects(flags.format, matcher.rules(), options))
          return
        }
        const writer = createExportWriter(io, redirectApplier, flags, options, resolve(flags.output))
        if (!flags.watch) {
          await writer.writeIfChanged()
          return
        }
        await watch(io, writer, redirectApplier, flags.interval)
      })
    })
}

/**
 * Streams `chunks` to `stdout` with back-pressure. A reader that stops early (`| head`) closes the
 * pipe: that ends the export quietly instead of with an EPIPE error.
 */
function writeToStream(stdout: CliOutput, chunks: Iterable<string>): Promise<void> {
  return new Promise((done, fail) => {
    const source = Readable.from(chunks)
    const onError = (error: NodeJS.ErrnoException) => {
      source.destroy()
      if (error.code === 'EPIPE') done()
      else fail(error)
    }
    stdout.once('error', onError)
    source.once('error', fail)
    source.once('end', () => {
      stdout.off('error', onError)
      done()
    })
    source.pipe(stdout, { end: false })
  })
}

/** Writes the export to `file` and runs `--then`, skipping both when the content is unchanged. */
function createExportWriter(
  io: CliIo,
  applier: RedirectApplier,
  flags: ExportFlags,
  options: RedirectExportOptions,
  file: string,
) {
  let lastDigest: string | undefined
  return {
    async writeIfChanged(): Promise<void> {
      const matcher = await applier.buildMatcher()
      const digest = await writeAtomically(file, exportRedirects(flags.format, matcher.rules(), options))
      if (digest === lastDigest) return
      lastDigest = digest
      writeLine(io.stderr, `lectern: wrote ${matcher.size} redirects to ${file}`)
      if (flags.then !== undefined) await runThen(io, flags.then)
    },
  }
}

/**
 * Writes `chunks` to a temporary file beside `file` (same file system), then renames it over
 * `file`, so that a server reading `file` sees the old or the new version, never half of one.
 * Returns the content's SHA-256, so that an unchanged export does not trigger `--then`.
 */
async function writeAtomically(file: string, chunks: Iterable<string>): Promise<string> {
  const temporary = join(
    dirname(file),
    `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  )
  const hash = createHash('sha256')
  const handle = await open(temporary, 'w', 0o644).catch((error: NodeJS.ErrnoException) => {
    // Named as the user gave it, not as the temporary file beside it.
    if (error.code === 'ENOENT') throw new ValidationError(`cannot write ${file}: no folder ${dirname(file)}`)
    if (error.code === 'EACCES' || error.code === 'EPERM' || error.code === 'EROFS')
      throw new ValidationError(`cannot write ${file}: not allowed to write in ${dirname(file)}`)
    if (error.code === 'ENOTDIR')
      throw new ValidationError(`cannot write ${file}: ${dirname(file)} is not a folder`)
    throw error
  })
  try {
    let buffered: string[] = []
    let size = 0
    for (const chunk of chunks) {
      hash.update(chunk)
      buffered.push(chunk)
      size += chunk.length
      // Thousands of small lines per write call: bounded memory, few system calls.
      if (size >= 1 << 16) {
        await handle.write(buffered.join(''))
        buffered = []
        size = 0
      }
    }
    if (buffered.length > 0) await handle.write(buffered.join(''))
    await handle.sync()
    await handle.close()
    await rename(temporary, file)
  } catch (error) {
    await handle.close().catch(() => undefined)
    await rm(temporary, { force: true })
    throw error
  }
  return hash.digest('hex')
}

/** Runs `command` through the shell, its output passed through; a failure is logged, never fatal. */
function runThen(io: CliIo, command: string): Promise<void> {
  return new Promise((done) => {
    // The process's own streams are handed down as they are (a terminal stays a terminal); any
    // other is fed from a pipe.
    const passed = (stream: CliOutput, own: NodeJS.WriteStream) => (stream === own ? 'inherit' : 'pipe')
    const child = spawn(command, {
      shell: true,
      stdio: ['ignore', passed(io.stdout, process.stdout), passed(io.stderr, process.stderr)],
    })
    child.stdout?.pipe(io.stdout, { end: false })
    child.stderr?.pipe(io.stderr, { end: false })
    child.once('error', (error) => {
      writeLine(io.stderr, `lectern: --then command could not start: ${error.message}`)
      done()
    })
    child.once('exit', (code, signal) => {
      if (code !== 0)
        writeLine(
          io.stderr,
          `lectern: --then command failed (${signal ? `signal ${signal}` : `exit status ${code}`})`,
        )
      done()
    })
  })
}

/**
 * Polls the content version every `interval` seconds (one one-row query) and rewrites the export
 * when it moved. Returns on SIGINT or SIGTERM, after the write in progress, if any, has finished.
 * A failed check or write (the database briefly away) is logged and retried at the next tick.
 */
async function watch(
  io: CliIo,
  writer: ReturnType<typeof createExportWriter>,
  applier: RedirectApplier,
  interval: number,
): Promise<void> {
  let stopped = false
  let wake: (() => void) | undefined
  const stop = () => {
    stopped = true
    wake?.()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  let seen: number | undefined
  try {
    while (!stopped) {
      try {
        const version = await applier.contentVersion()
        if (version !== seen) {
          await writer.writeIfChanged()
          seen = version
        }
      } catch (error) {
        writeLine(
          io.stderr,
          `lectern: could not update the export: ${(error as Error).message.split('\n')[0]}`,
        )
      }
      if (stopped) break
      await new Promise<void>((done) => {
        const timer = setTimeout(done, interval * 1000)
        wake = () => {
          clearTimeout(timer)
          done()
        }
      })
    }
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
  writeLine(io.stderr, 'lectern: stopped watching')
}
