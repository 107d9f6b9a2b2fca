// What starting a command costs: `lectern --version`, `lectern users list` (opens the database and
// reads) and `lectern serve` up to listening, each run BENCH_RUNS times (default 10) from the
// bundle `bin/lectern` runs (dist/bundle/, scripts/bundle-cli.mjs) and from the modules tsc writes
// (dist/cli/main.js and the files it imports), alternating, on a temporary SQLite file. Prints the
// median wall time and the process's own CPU time (user + system), which a busy machine moves less.
// Run `npm run build` first: this measures dist/.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from './lib/lectern.mjs'
import { freePort, processCpuMs } from './lib/processes.mjs'
import { median } from './lib/stats.mjs'

const RUNS = Number(process.env.BENCH_RUNS ?? 10)
const entries = {
  bundle: pathToFileURL(join(ROOT, 'dist', 'bundle', 'lectern.js')).href,
  modules: pathToFileURL(join(ROOT, 'dist', 'cli', 'main.js')).href,
}
// The process reports its own CPU time as it exits; `bin/lectern` is the same two lines as `run`.
const reportCpu = `data:text/javascript,${encodeURIComponent(
  "import { writeSync } from 'node:fs'; process.on('exit', () => { const u = process.cpuUsage(); writeSync(2, '\\ncpu-us ' + (u.user + u.system) + '\\n') })",
)}`
const run =
  'const { main } = await import(process.env.LECTERN_ENTRY); process.exitCode = await main(["node", "lectern", ...process.argv.slice(1)])'

const dir = mkdtempSync(join(tmpdir(), 'lectern-cli-startup-'))
const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, LOG_LEVEL: 'info' }

/** Runs one command to its end: { wallMs, cpuMs }. */
function timed(entry, args) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(
      process.execPath,
      ['--import', reportCpu, '--input-type=module', '-e', run, '--', ...args],
      {
        env: { ...env, LECTERN_ENTRY: entry },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => {
      const cpu = stderr.match(/cpu-us (\d+)/)
      if (code !== 0 || !cpu) return reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`))
      resolve({ wallMs: Number(process.hrtime.bigint() - started) / 1e6, cpuMs: Number(cpu[1]) / 1000 })
    })
  })
}

/** Starts `serve` and stops it once it listens: { wallMs, cpuMs } up to that line. */
async function timedServe(entry) {
  const port = await freePort()
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', run, '--', 'serve', '--port', String(port)],
      {
        env: { ...env, LECTERN_ENTRY: entry },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let output = ''
    const onData = (chunk) => {
      output += chunk
      if (!/Server listening/.test(output)) return
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6
      const cpuMs = processCpuMs(child.pid)
      child.stdout.off('data', onData)
      child.once('close', () => resolve({ wallMs, cpuMs }))
      child.kill('SIGTERM')
    }
    child.stdout.on('data', onData)
    child.on('error', reject)
    child.on('close', (code) => {
      if (!/Server listening/.test(output)) reject(new Error(`serve exited ${code}: ${output}`))
    })
  })
}

try {
  await timed(entries.bundle, ['migrate'])
  const commands = {
    '--version': (entry) => timed(entry, ['--version']),
    'users list': (entry) => timed(entry, ['users', 'list']),
    'serve, until listening': (entry) => timedServe(entry),
  }
  console.log(`Starting a command, median of ${RUNS} runs each (Node.js ${process.version})`)
  console.log('command                 | entry   | wall ms | CPU ms')
  console.log('------------------------|---------|--------:|------:')
  for (const [name, measure] of Object.entries(commands)) {
    const samples = { bundle: [], modules: [] }
    for (let i = 0; i < RUNS; i++) {
      for (const which of i % 2 === 0 ? ['bundle', 'modules'] : ['modules', 'bundle']) {
        samples[which].push(await measure(entries[which]))
      }
    }
    for (const which of ['bundle', 'modules']) {
      const wall = median(samples[which].map((sample) => sample.wallMs))
      const cpu = median(samples[which].map((sample) => sample.cpuMs))
      console.log(
        `${name.padEnd(23)} | ${which.padEnd(7)} | ${wall.toFixed(0).padStart(7)} | ${cpu.toFixed(0).padStart(6)}`,
      )
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
