import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/** The CPU the measured server runs on, and the one the load generator (and this harness) run on. */
export const SERVER_CPU = 0
export const LOAD_CPU = 1

const commandWorks = (command, args) => {
  try {
    return spawnSync(command, args, { stdio: 'ignore' }).status === 0
  } catch {
    return false
  }
}

/** Whether processes can be pinned to single cores: `taskset` exists and the machine has two. */
export const canPin = commandWorks('taskset', ['-c', String(LOAD_CPU), 'true'])

/** GNU time reports a child's peak RSS exactly; without it the harness samples /proc instead. */
export const gnuTime = existsSync('/usr/bin/time') && commandWorks('/usr/bin/time', ['-v', 'true'])

/** Pins this process (the harness, which samples memory) to the load generator's core. */
export function pinSelf() {
  if (canPin) spawnSync('taskset', ['-cp', String(LOAD_CPU), String(process.pid)], { stdio: 'ignore' })
}

/** The command line that runs `command` on `cpu` where pinning is possible (taskset execs, keeping the pid). */
export function onCpu(cpu, command, args) {
  return canPin ? ['taskset', ['-c', String(cpu), command, ...args]] : [command, args]
}

const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100
  } catch {
    return 100
  }
})()

/** CPU time (ms) spent by the whole machine outside idle, from /proc/stat; null where unavailable. */
export function machineBusyMs() {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/)
    const [user, nice, system, , , irq, softirq, steal] = fields.map(Number)
    return ((user + nice + system + irq + softirq + (steal || 0)) * 1000) / CLOCK_TICKS_PER_SECOND
  } catch {
    return null
  }
}

/** The CPU time (ms, user + system) in a `/proc/<pid>/stat` line. */
function cpuMsOfStat(stat) {
  // The name in parentheses may hold spaces: the fields are counted from after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND
}

/** CPU time (ms, user + system) a process has used so far; null once it is gone. */
export function processCpuMs(pid) {
  try {
    return cpuMsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return null
  }
}

/**
 * CPU time (ms) used so far by each process whose name (`comm`) is `name`, by pid: e.g. every process
 * of the PostgreSQL cluster, or Redis. Compare two snapshots with `cpuSpentBetween`.
 */
export function processesCpuMs(name) {
  const spent = new Map()
  let entries = []
  try {
    entries = readdirSync('/proc')
  } catch {
    return spent
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === name)
        spent.set(entry, cpuMsOfStat(stat))
    } catch {
      // Gone between the listing and the read.
    }
  }
  return spent
}

/** The CPU time (ms) the processes of two `processesCpuMs` snapshots used between them (those in both). */
export function cpuSpentBetween(before, after) {
  let total = 0
  for (const [pid, ms] of after) {
    const earlier = before.get(pid)
    if (earlier !== undefined) total += ms - earlier
  }
  return total
}

/** Reads a process's resident set size and its high-water mark, in kB, from /proc; null once gone. */
export function readMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const field = (name) => {
      const match = status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))
      return match ? Number(match[1]) : null
    }
    return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') }
  } catch {
    return null
  }
}

/**
 * Samples a process's memory every `intervalMs` until stopped. `stop()` returns the largest VmRSS
 * seen, the last one, and the last VmHWM (the kernel's own peak over the process's life).
 */
export function sampleMemory(pid, intervalMs = 100) {
  let peakRssKb = 0
  let lastRssKb = null
  let hwmKb = null
  let samples = 0
  const take = () => {
    const memory = readMemory(pid)
    if (memory === null) return
    samples++
    lastRssKb = memory.rssKb
    hwmKb = memory.hwmKb
    if (memory.rssKb !== null && memory.rssKb > peakRssKb) peakRssKb = memory.rssKb
  }
  take()
  const timer = setInterval(take, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      take()
      return { peakRssKb, lastRssKb, hwmKb, samples }
    },
  }
}

/**
 * Runs a command to completion and collects its output. `input` is written to its stdin (then
 * closed); a run longer than `timeoutMs` is killed and reported as failed. `onSpawn` sees the child.
 */
export function run(command, args, { env = process.env, input, timeoutMs = 0, cwd, onSpawn } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] })
    onSpawn?.(child)
    const stdout = []
    const stderr = []
    child.stdout.on('data', (chunk) => stdout.push(chunk))
    child.stderr.on('data', (chunk) => stderr.push(chunk))
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            child.kill('SIGKILL')
          }, timeoutMs)
        : null
    child.on('error', reject)
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer)
      resolve({
        code,
        signal,
        pid: child.pid,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      })
    })
    child.stdin.on('error', () => {})
    child.stdin.end(input ?? '')
  })
}

/**
 * Runs a command and measures its wall time and peak RSS: GNU `time -v` where present (its
 * "Maximum resident set size"), else the last VmHWM sampled from /proc before it exits.
 */
export async function runMeasured(command, args, options = {}) {
  const started = performance.now()
  if (gnuTime) {
    const result = await run('/usr/bin/time', ['-v', command, ...args], options)
    const wallMs = Math.round(performance.now() - started)
    const match = result.stderr.match(/Maximum resident set size \(kbytes\): (\d+)/)
    const stderr = result.stderr.replace(/\tCommand being timed:[\s\S]*$/, '').replace(/\s+$/, '')
    return { ...result, stderr, wallMs, peakRssKb: match ? Number(match[1]) : null, rssSource: 'time -v' }
  }
  let sampler = null
  const result = await run(command, args, {
    ...options,
    onSpawn: (child) => {
      sampler = sampleMemory(child.pid, 50)
    },
  })
  const memory = sampler ? sampler.stop() : null
  return {
    ...result,
    wallMs: Math.round(performance.now() - started),
    peakRssKb: memory ? Math.max(memory.hwmKb ?? 0, memory.peakRssKb) : null,
    rssSource: '/proc VmHWM',
  }
}

/** A TCP port on 127.0.0.1 that is free right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Stops a long-running child: SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopProcess(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}
