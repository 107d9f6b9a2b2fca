import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { request } from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, onCpu, run, SERVER_CPU, sleep, stopProcess } from './processes.mjs'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

let home = ROOT

/**
 * Copies the built server (`bin/`, `dist/`, `package.json`) to `dir` and runs Lectern from there
 * for the rest of the run, so that a rebuild while the benchmark runs cannot change what it measures.
 */
export function useBuildSnapshot(dir) {
  home = snapshotBuild(ROOT, dir)
}

/**
 * Copies the built server of the tree at `from` (`bin/`, `dist/`, `package.json`) to `dir`, with
 * this repository's `node_modules`; returns `dir`, a home to run that build from. The before/after
 * comparison runs two builds side by side this way.
 */
export function snapshotBuild(from, dir) {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  for (const entry of ['bin', 'dist', 'package.json']) {
    cpSync(join(from, entry), join(dir, entry), { recursive: true })
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  return dir
}

/** The Node flags on the first line of `bin/lectern` (`#!/usr/bin/env -S node <flags>`). */
function shebangFlags(from) {
  const first = readFileSync(lecternBin(from), 'utf8').split('\n', 1)[0]
  return first
    .replace(/^#!.*?\bnode\b/, '')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
}

/** Where the measured build lives: the snapshot once taken, else the repository. */
export const lecternHome = () => home
const lecternBin = (from = home) => join(from, 'bin', 'lectern')

/** Rate limits high enough that the limiter counts every request but never refuses one. */
const LIMITS = { RATE_LIMIT_PER_HOUR: '1000000000', RATE_LIMIT_PER_SECOND: '1000000000' }

/**
 * The measured servers' log level: `warn` logs no request that succeeds, so the figures are the read
 * path's own; `BENCH_LOG_LEVEL=info` (Lectern's default) measures it with a line per request, which
 * the servers write to `/dev/null`.
 */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'warn'

/** The environment `lectern` runs in here: the database, the log level and limits above, then `extra`. */
export function lecternEnv(databaseUrl, extra = {}) {
  const env = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL, ...LIMITS, ...extra }
  delete env.REDIS_URL
  if (extra.REDIS_URL) env.REDIS_URL = extra.REDIS_URL
  return env
}

/** Runs `lectern <args>` against a database and fails with its stderr when it exits non-zero. */
export async function cli(databaseUrl, args, { input, timeoutMs = 120_000, from = home } = {}) {
  const result = await run(process.execPath, [lecternBin(from), ...args], {
    env: lecternEnv(databaseUrl),
    input,
    timeoutMs,
    cwd: from,
  })
  if (result.code !== 0) {
    throw new Error(
      `lectern ${args.join(' ')} failed (${result.code ?? result.signal}): ${result.stderr.trim()}`,
    )
  }
  return result.stdout
}

export const BENCH_EMAIL = 'bench@example.com'

/**
 * Creates the benchmark's global admin (unless it exists) and a fresh API key through the CLI, as
 * an operator would; the key is the last line of `keys create`.
 */
export async function createApiKey(databaseUrl, from = home) {
  const users = await cli(databaseUrl, ['users', 'list', '--json'], { from })
  if (!users.includes(`"${BENCH_EMAIL}"`)) {
    await cli(databaseUrl, ['users', 'create', '--email', BENCH_EMAIL, '--role', 'global_admin'], {
      input: 'a benchmark passphrase that is long enough\n',
      from,
    })
  }
  const out = await cli(databaseUrl, ['keys', 'create', '--name', 'bench', '--user', BENCH_EMAIL], { from })
  const key = out.trim().split('\n').pop()?.trim()
  if (!key?.startsWith('lk_')) throw new Error(`keys create printed no key: ${out}`)
  return key
}

/** One GET over a fresh connection: status, raw headers in order, and the body bytes. */
export function fetchRaw(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () =>
        resolve({ status: res.statusCode, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }),
      )
      res.on('error', reject)
    })
    req.setTimeout(60_000, () => req.destroy(new Error(`GET ${path} timed out`)))
    req.on('error', reject)
    req.end()
  })
}

/** Polls `path` until it answers 200, or fails after `timeoutMs` (or when the process exits). */
export async function waitUntilReady(port, path, child, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  let lastError = null
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before it was ready`)
    try {
      const response = await fetchRaw(port, path)
      if (response.status === 200) return
      lastError = new Error(`${path} answered ${response.status}`)
    } catch (error) {
      lastError = error
    }
    await sleep(50)
  }
  throw new Error(`server not ready after ${timeoutMs} ms: ${lastError?.message}`)
}

/**
 * Starts `lectern serve` on a free loopback port, pinned to the server core, and waits for
 * `/healthz` and `/readyz`. Returns the port, the pid (of node itself) and a `stop()`.
 */
export async function startLectern(
  databaseUrl,
  { redisUrl, from = home, env: extraEnv = {}, nodeArgs = [], wrapper = [] } = {},
) {
  const port = await freePort()
  // Started as an executable, as `npm start` does, so the V8 flags on its first line apply; with
  // extra Node flags (`--cpu-prof` is refused in NODE_OPTIONS) or under a `wrapper` command
  // (valgrind), through node with those flags too.
  const serve = ['serve', '--port', String(port)]
  const [first, ...rest] = [...wrapper, process.execPath, ...shebangFlags(from), ...nodeArgs]
  const [command, args] =
    nodeArgs.length === 0 && wrapper.length === 0
      ? onCpu(SERVER_CPU, lecternBin(from), serve)
      : onCpu(SERVER_CPU, first, [...rest, lecternBin(from), ...serve])
  // An API-only instance: the dashboard and the reference page are not what is measured.
  const env = lecternEnv(databaseUrl, {
    HOST: '127.0.0.1',
    ADMIN_DASHBOARD: 'off',
    API_REFERENCE: 'off',
    ...extraEnv,
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  })
  const child = spawn(command, args, { env, cwd: from, stdio: ['ignore', 'ignore', 'pipe'] })
  // The last few kilobytes of its log, to explain an unexpected exit.
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-8000)
  })
  try {
    await waitUntilReady(port, '/readyz', child, 120_000)
  } catch (error) {
    await stopProcess(child)
    throw new Error(`${error.message}\n${stderr.slice(-2000)}`)
  }
  return {
    port,
    pid: child.pid,
    child,
    stderr: () => stderr,
    stop: () => stopProcess(child),
  }
}
