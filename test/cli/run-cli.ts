import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { main } from '../../src/cli/main.js'

export const BIN = fileURLToPath(new URL('../../bin/lectern', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
  /** Non-empty stdout lines. */
  lines: string[]
}

/** What a CLI run is given besides its arguments; `env` is added to this process's environment. */
export interface CliOptions {
  databaseUrl?: string
  /** Piped on stdin (nothing, when not given). */
  input?: string
  env?: Record<string, string>
}

/** The environment of one run: this process's, with LOG_LEVEL=warn, `options.env` and the database. */
function runEnvironment(options: CliOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...options.env }
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl
  return env
}

/** A stream that appends what is written to it to a string. */
function collector(append: (text: string) => void): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      append(String(chunk))
      done()
    },
  })
}

function result(code: number | null, stdout: string, stderr: string): CliResult {
  return { code, stdout, stderr, lines: stdout.split('\n').filter((line) => line.trim() !== '') }
}

/**
 * Runs the CLI's `main` in this process, as `bin/lectern` runs it, against `databaseUrl`: the same
 * commands, output and exit status without a second spent starting Node for each. Every run gets
 * its own environment, frozen, so nothing one run sets can reach the next.
 */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const code = await main(['node', BIN, ...args], {
    env: Object.freeze(runEnvironment(options)),
    stdout: collector((text) => {
      stdout += text
    }),
    stderr: collector((text) => {
      stderr += text
    }),
    // A test's stdin is a pipe, never a terminal: what it pipes, or nothing.
    readStdin: async () => options.input ?? '',
  })
  return result(code, stdout, stderr)
}

/**
 * Runs `bin/lectern` as a separate process, as a user would, against `databaseUrl`: for tests whose
 * point is the process (its exit status and streams end to end, or another process's view).
 */
export function runCliProcess(
  args: string[],
  options: CliOptions & { cwd?: string; nodeOptions?: string[] } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeOptions ?? []), BIN, ...args], {
      env: runEnvironment(options),
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => resolve(result(code, stdout, stderr)))
    child.stdin.end(options.input ?? '')
  })
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

export interface LongRunningCli {
  child: ChildProcess
  /** Resolves with stdout so far once `ready` matches it; rejects if the process exits first. */
  ready: Promise<string>
  /** Everything the process has printed so far. */
  output(): { stdout: string; stderr: string }
  /** Sends SIGTERM and resolves with the exit status once the process is gone. */
  stop(): Promise<number | null>
}

/** Starts a long-running CLI command (`serve`, `demo`) in `cwd` with `env` added to this one's. */
export function startCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; ready: RegExp },
): LongRunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, ...options.env },
    cwd: options.cwd,
  })
  let stdout = ''
  let stderr = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${stdout}${stderr}`)), 20_000)
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      if (options.ready.test(stdout)) {
        clearTimeout(timer)
        resolve(stdout)
      }
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited ${code}: ${stderr}`))
    })
  })
  return {
    child,
    ready,
    output: () => ({ stdout, stderr }),
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}
