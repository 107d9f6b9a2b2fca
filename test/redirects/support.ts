import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/tables.js'
import type { RedirectAnswer, RedirectRule } from '../../src/services/redirects/matcher.js'
import { freePort } from '../cli/run-cli.js'

/** The runtimes that may be named in a case's `skip` (contract.md). */
export type Runtime = 'core' | 'cli' | 'nginx' | 'apache' | 'caddy' | 'js' | 'python' | 'php'

export interface RedirectCase {
  name: string
  target: string
  expect: RedirectAnswer | null
  skip?: Partial<Record<Runtime, string>>
}

export interface RedirectCaseFile {
  redirects: (RedirectRule & { id: string; createdAt: string; updatedAt: string })[]
  cases: RedirectCase[]
}

const CASE_FILE = new URL('../../spec/redirect-cases.json', import.meta.url)

/** `spec/redirect-cases.json`, the one table of cases every implementation of the redirect algorithm runs. */
export const caseFile: RedirectCaseFile = JSON.parse(readFileSync(CASE_FILE, 'utf8'))

/** The cases a runtime runs: every case not skipped for it. */
export const casesFor = (runtime: Runtime) => caseFile.cases.filter((c) => c.skip?.[runtime] === undefined)

/** What a server answered: the status and, when present, the raw `Location` header. */
export interface RawAnswer {
  status: number
  location: string | undefined
}

/**
 * Sends `GET <target> HTTP/1.1` with the target's UTF-8 bytes exactly as written in the case (no
 * client library re-encodes or rejects them: Node's own `http.request` would refuse raw UTF-8 or
 * send it as Latin-1), and reads back the status and `Location`.
 */
export function rawGet(port: number, target: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer to ${target} within 5 s`)))
    socket.on('connect', () => {
      socket.write(
        Buffer.concat([
          Buffer.from('GET ', 'latin1'),
          Buffer.from(target, 'utf8'),
          Buffer.from(' HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', 'latin1'),
        ]),
      )
    })
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const head = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n')[0] ?? ''
      const [statusLine, ...headers] = head.split('\r\n')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1])
      if (!Number.isInteger(status))
        return reject(new Error(`not an HTTP answer to ${target}: ${head.slice(0, 200)}`))
      const location = headers.find((line) => /^location:/i.test(line))?.replace(/^location:\s*/i, '')
      // Header bytes are UTF-8 if anything; Latin-1 above kept them intact for this decode.
      resolve({
        status,
        location: location === undefined ? undefined : Buffer.from(location, 'latin1').toString('utf8'),
      })
    })
  })
}

/**
 * A redirect answer as the case file writes it, or `null` when the server served the request as
 * usual: the fallback's 404, or the 400 a server gives a target it cannot parse (an invalid
 * percent-encoding). Any other status is returned as is, so that it fails the comparison.
 */
export function asRedirect(answer: RawAnswer, origin?: string): RedirectAnswer | null | { status: number } {
  if (answer.status === 404 || answer.status === 400) return null
  if (answer.status !== 301 && answer.status !== 302) return { status: answer.status }
  let location = answer.location ?? ''
  // Only for servers that cannot be told to send a path (see each test): strip their own origin.
  if (origin !== undefined && location.startsWith(origin)) location = location.slice(origin.length)
  return { status: answer.status, location }
}

/** Whether `command` can be run (found on PATH or at its absolute path). */
/**
 * A request target as a reference implementation in a test reads it: the fragment dropped, the path
 * percent-decoded once (`null` when its encoding is invalid), the query as received.
 */
export function splitTarget(target: string): { path: string | null; query: string } {
  const [beforeFragment = ''] = target.split('#')
  const mark = beforeFragment.indexOf('?')
  const rawPath = mark === -1 ? beforeFragment : beforeFragment.slice(0, mark)
  const query = mark === -1 ? '' : beforeFragment.slice(mark + 1)
  try {
    return { path: decodeURIComponent(rawPath), query }
  } catch {
    return { path: null, query }
  }
}

export function hasBinary(command: string): boolean {
  if (command.includes('/')) return existsSync(command)
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
}

/** A web server running in the foreground on a loopback port, with its own temporary directory. */
export interface RunningServer {
  port: number
  dir: string
  /** Everything the server wrote to stdout/stderr and its error log, for failure messages. */
  output(): string
  stop(): Promise<void>
}

/** Waits until something accepts connections on the port, or the process has exited. */
async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`the server did not listen on ${port} within 15 s:\n${output()}`)
}

/**
 * Starts `command args` in the foreground; `configure(dir, port)` writes its configuration into
 * a fresh temporary directory first. Stopped by its PID (SIGTERM, then SIGKILL after 5 s).
 */
export async function startServer(
  command: string,
  configure: (dir: string, port: number) => { args: string[]; env?: NodeJS.ProcessEnv; logs?: string[] },
): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), 'lectern-webserver-'))
  const port = await freePort()
  const { args, env, logs = [] } = configure(dir, port)
  const child = spawn(command, args, {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let captured = ''
  child.stdout?.on('data', (chunk) => {
    captured += chunk
  })
  child.stderr?.on('data', (chunk) => {
    captured += chunk
  })
  const output = () =>
    [captured, ...logs.map((log) => (existsSync(log) ? readFileSync(log, 'utf8') : ''))]
      .join('\n')
      .slice(-4000)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  try {
    await waitForPort(port, child, output)
  } catch (error) {
    child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    port,
    dir,
    output,
    async stop() {
      if (child.exitCode === null && child.pid !== undefined) {
        process.kill(child.pid, 'SIGTERM')
        const timer = setTimeout(
          () => child.pid !== undefined && child.exitCode === null && process.kill(child.pid, 'SIGKILL'),
          5000,
        )
        await exited
        clearTimeout(timer)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** nginx in the foreground, the export `include`d inside `server { }`. */
export function startNginx(exported: string): Promise<RunningServer> {
  return startServer('nginx', (dir, port) => {
    writeFileSync(join(dir, 'redirects.conf'), exported)
    const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => {
      mkdirSync(join(dir, name))
      return `${name}_temp_path ${join(dir, name)};`
    })
    writeFileSync(
      join(dir, 'nginx.conf'),
      `daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 64; }
http {
  access_log off;
  ${temp.join('\n  ')}
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
    include ${join(dir, 'redirects.conf')};
    location / { return 404; }
  }
}
`,
    )
    return {
      args: ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')],
      logs: [join(dir, 'error.log')],
    }
  })
}

const APACHE_MODULES = '/usr/lib/apache2/modules'

/** Apache httpd in the foreground with only the modules it needs, the export `Include`d in a `<VirtualHost>`. */
export function startApache(exported: string): Promise<RunningServer> {
  return startServer('/usr/sbin/apache2', (dir, port) => {
    writeFileSync(join(dir, 'redirects.conf'), exported)
    mkdirSync(join(dir, 'www'))
    const root = process.getuid?.() === 0
    // Run as root, Apache serves as `nobody`, who must reach the document root to answer 404.
    if (root) chmodSync(dir, 0o755)
    writeFileSync(
      join(dir, 'httpd.conf'),
      `ServerRoot "${dir}"
LoadModule mpm_event_module ${APACHE_MODULES}/mod_mpm_event.so
LoadModule authz_core_module ${APACHE_MODULES}/mod_authz_core.so
LoadModule rewrite_module ${APACHE_MODULES}/mod_rewrite.so
${root ? 'User nobody\nGroup nogroup\n' : ''}PidFile "${join(dir, 'httpd.pid')}"
DefaultRuntimeDir "${dir}"
Mutex file:${dir} default
ErrorLog "${join(dir, 'error.log')}"
LogLevel warn
Listen 127.0.0.1:${port}
ServerName localhost
DocumentRoot "${join(dir, 'www')}"
<Directory />
  AllowOverride None
</Directory>
<VirtualHost 127.0.0.1:${port}>
  ServerName localhost
  Include "${join(dir, 'redirects.conf')}"
</VirtualHost>
`,
    )
    return { args: ['-f', join(dir, 'httpd.conf'), '-DFOREGROUND'], logs: [join(dir, 'error.log')] }
  })
}

/** Caddy in the foreground (no admin endpoint, no HTTPS), the export `import`ed in a site block. */
export function startCaddy(exported: string): Promise<RunningServer> {
  return startServer('caddy', (dir, port) => {
    writeFileSync(join(dir, 'redirects.caddy'), exported)
    writeFileSync(
      join(dir, 'Caddyfile'),
      `{
	admin off
	auto_https off
	storage file_system ${join(dir, 'storage')}
}
http://:${port} {
	bind 127.0.0.1
	import ${join(dir, 'redirects.caddy')}
	respond 404
}
`,
    )
    return {
      args: ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'],
      env: { HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') },
    }
  })
}

/**
 * Stores the case file's redirects as rows, exactly as given (decoded paths, ids, timestamps), the
 * way the redirects service stores them; straight to the table so that these tests depend on the
 * matching rules alone, not on how an import or a form reads its input.
 */
export async function insertCaseRedirects(db: Kysely<Database>): Promise<void> {
  await db
    .insertInto('redirects')
    .values(
      caseFile.redirects.map((r) => ({
        id: r.id,
        from_path: r.fromPath,
        to_path: r.toPath,
        type: r.type as 'permanent' | 'temporary',
        is_active: r.isActive === false ? (0 as const) : (1 as const),
        created_at: r.createdAt,
        updated_at: r.updatedAt,
      })),
    )
    .execute()
}
