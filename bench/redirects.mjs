// `node bench/redirects.mjs [count]` (after `npm run build`): 100,000 active redirects by default.
// Prints the matcher's build and per-match times, loading them from SQLite, writing each export
// format, and nginx, Apache and Caddy checking and starting with the exports included (and the time
// of one request that matches the last rule). Numbers only: nothing is asserted.
import { spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

const ROOT = new URL('..', import.meta.url).pathname
const { createRedirectMatcher } = await import(join(ROOT, 'dist/services/redirects/matcher.js'))
const { exportRedirects, REDIRECT_EXPORT_FORMATS } = await import(
  join(ROOT, 'dist/services/redirects/exports.js')
)
const { openDatabase } = await import(join(ROOT, 'dist/db/database.js'))
const { migrateToLatest } = await import(join(ROOT, 'dist/db/migrate.js'))
const { createRedirectApplier } = await import(join(ROOT, 'dist/services/redirects/applier.js'))

const COUNT = Number(process.argv[2] ?? 100_000)
const dir = mkdtempSync(join(tmpdir(), 'lectern-bench-redirects-'))
chmodSync(dir, 0o755)
// Wall time, and this process's CPU time beside it: on a busy machine the CPU time is the steadier.
let cpuStart = process.cpuUsage()
const ms = (start) => {
  const cpu = process.cpuUsage(cpuStart)
  return `${(performance.now() - start).toFixed(1)} (cpu ${((cpu.user + cpu.system) / 1000).toFixed(1)})`
}
const wall = (start) => (performance.now() - start).toFixed(1)
const begin = () => {
  cpuStart = process.cpuUsage()
  return performance.now()
}
const print = (label, value) => console.log(`${label.padEnd(52)} ${value}`)

// A realistic mix: plain paths, one in ten chained to the next, some non-ASCII and some with spaces.
const stamp = '2024-01-05T10:00:00Z'
const redirects = Array.from({ length: COUNT }, (_, i) => {
  const from = i % 50 === 0 ? `/archiv/über-${i}` : i % 70 === 0 ? `/old docs/${i}` : `/blog/2019/post-${i}`
  const to = i % 10 === 0 && i + 1 < COUNT ? null : `/articles/${i}`
  return {
    id: `redirect_bench_${i}`,
    fromPath: from,
    toPath: to,
    type: i % 3 === 0 ? 'temporary' : 'permanent',
    isActive: true,
    createdAt: stamp,
    updatedAt: stamp,
  }
})
for (let i = 0; i < COUNT; i++)
  if (redirects[i].toPath === null) redirects[i].toPath = redirects[i + 1].fromPath

console.log(`${COUNT} active redirects (${redirects.filter((_, i) => i % 10 === 0).length} chained)\n`)

let start = begin()
const matcher = createRedirectMatcher(redirects)
print('matcher build', `${ms(start)} ms`)

const targets = redirects.map((r) => encodeURI(r.fromPath))
for (let i = 0; i < targets.length; i += 2) targets[i] += '?utm_source=mail&x=%C3%BC'
for (let i = 0; i < targets.length; i += 5) targets[i] = `/missing-${i}`
const rounds = Math.max(1, Math.floor(1_000_000 / targets.length))
let hits = 0
start = begin()
for (let round = 0; round < rounds; round++) for (const target of targets) if (matcher.match(target)) hits++
const matches = rounds * targets.length
const perMatch = ((performance.now() - start) * 1000) / matches
const { user, system } = process.cpuUsage(cpuStart)
print(
  'match (hits, misses, queries and encoded paths)',
  `${perMatch.toFixed(3)} µs per match (cpu ${((user + system) / matches).toFixed(3)}; ${matches} matches, ${hits} hits)`,
)

// The database face: rows as the redirects service stores them, loaded in batches.
const database = openDatabase(`sqlite:${join(dir, 'bench.db')}`)
await migrateToLatest(database)
for (let i = 0; i < COUNT; i += 2000)
  await database.db
    .insertInto('redirects')
    .values(
      redirects.slice(i, i + 2000).map((r) => ({
        id: r.id,
        from_path: r.fromPath,
        to_path: r.toPath,
        type: r.type,
        is_active: 1,
        created_at: r.createdAt,
        updated_at: r.updatedAt,
      })),
    )
    .execute()
const applier = createRedirectApplier(database.db)
start = begin()
const loaded = await applier.matcher()
print('load from SQLite in batches + build (cold)', `${ms(start)} ms (${loaded.size} rules)`)
start = begin()
await applier.matcher()
print('cached matcher, content unchanged (one version query)', `${ms(start)} ms`)
await database.close()

const files = {}
for (const format of REDIRECT_EXPORT_FORMATS) {
  const file = join(dir, `export.${format}`)
  start = begin()
  const fd = openSync(file, 'w')
  let buffered = []
  let size = 0
  for (const chunk of exportRedirects(format, matcher.rules(), { host: 'www.example.com' })) {
    buffered.push(chunk)
    size += chunk.length
    if (size >= 1 << 16) {
      writeSync(fd, buffered.join(''))
      buffered = []
      size = 0
    }
  }
  writeSync(fd, buffered.join(''))
  closeSync(fd)
  files[format] = file
  print(`export ${format}`, `${ms(start)} ms, ${(statSync(file).size / 1e6).toFixed(1)} MB`)
}
console.log('')

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
const waitForPort = async (port, child) => {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`)
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    await new Promise((r) => setTimeout(r, 20))
  }
}
const timedGet = (port, target) =>
  new Promise((resolve, reject) => {
    const began = performance.now()
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`),
    )
    let head = ''
    socket.on('data', (d) => (head += d.toString('latin1')))
    socket.on('error', reject)
    socket.on('close', () =>
      resolve({ ms: (performance.now() - began).toFixed(2), status: head.slice(9, 12) }),
    )
  })
const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0

/** Checks the configuration, starts the server, times one request matching the last rule, stops it. */
async function server(name, binary, configure) {
  if (!has(binary)) return print(name, 'not installed: skipped')
  const home = join(dir, name)
  mkdirSync(home)
  chmodSync(home, 0o755)
  const port = await freePort()
  const { check, run, env } = configure(home, port)
  start = begin()
  const checked = spawnSync(binary, check, { env: { ...process.env, ...env }, encoding: 'utf8' })
  print(`${name}: check configuration`, `${wall(start)} ms (exit ${checked.status})`)
  start = begin()
  const child = spawn(binary, run, { env: { ...process.env, ...env }, stdio: 'ignore' })
  await waitForPort(port, child)
  print(`${name}: start until listening`, `${wall(start)} ms`)
  const last = targets.length - 1
  const target = targets[last].startsWith('/missing') ? targets[last - 1] : targets[last]
  await timedGet(port, target)
  const answer = await timedGet(port, target)
  print(`${name}: one request matching the last rule`, `${answer.ms} ms (status ${answer.status})`)
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

const APACHE_MODULES = '/usr/lib/apache2/modules'
await server('nginx', 'nginx', (home, port) => {
  for (const temp of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(home, temp))
  writeFileSync(
    join(home, 'nginx.conf'),
    `daemon off; pid ${home}/nginx.pid; error_log ${home}/error.log warn;
events { worker_connections 64; }
http { access_log off; ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `${t}_temp_path ${home}/${t};`).join(' ')}
  server { listen 127.0.0.1:${port}; include ${files.nginx}; location / { return 404; } } }
`,
  )
  const args = ['-p', home, '-e', join(home, 'error.log'), '-c', join(home, 'nginx.conf')]
  return { check: ['-t', ...args], run: args }
})
await server('apache', '/usr/sbin/apache2', (home, port) => {
  mkdirSync(join(home, 'www'))
  writeFileSync(
    join(home, 'httpd.conf'),
    `ServerRoot "${home}"
LoadModule mpm_event_module ${APACHE_MODULES}/mod_mpm_event.so
LoadModule authz_core_module ${APACHE_MODULES}/mod_authz_core.so
LoadModule rewrite_module ${APACHE_MODULES}/mod_rewrite.so
${process.getuid?.() === 0 ? 'User nobody\nGroup nogroup\n' : ''}PidFile "${home}/httpd.pid"
DefaultRuntimeDir "${home}"
Mutex file:${home} default
ErrorLog "${home}/error.log"
Listen 127.0.0.1:${port}
ServerName localhost
DocumentRoot "${home}/www"
<Directory />
  AllowOverride None
</Directory>
<VirtualHost 127.0.0.1:${port}>
  Include "${files.apache}"
</VirtualHost>
`,
  )
  return {
    check: ['-t', '-f', join(home, 'httpd.conf')],
    run: ['-f', join(home, 'httpd.conf'), '-DFOREGROUND'],
  }
})
await server('caddy', 'caddy', (home, port) => {
  writeFileSync(
    join(home, 'Caddyfile'),
    `{\n\tadmin off\n\tauto_https off\n}\nhttp://:${port} {\n\tbind 127.0.0.1\n\timport ${files.caddy}\n\trespond 404\n}\n`,
  )
  const config = ['--config', join(home, 'Caddyfile'), '--adapter', 'caddyfile']
  return {
    check: ['validate', ...config],
    run: ['run', ...config],
    env: { HOME: home, XDG_DATA_HOME: join(home, 'data'), XDG_CONFIG_HOME: join(home, 'config') },
  }
})

rmSync(dir, { recursive: true, force: true })
