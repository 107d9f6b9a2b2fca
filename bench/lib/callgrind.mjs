// Reading what `valgrind --tool=callgrind --separate-threads=yes` dumps: one file per thread and
// dump (`<out>.<dump>-<thread>`), thread 1 being the process's main thread.
import { readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

/** The instructions a dump file counts (its `summary:` or `totals:` line); null when it has none. */
export function dumpTotal(text) {
  const match = /^(?:summary|totals): (\d+)/m.exec(text)
  return match === null ? null : Number(match[1])
}

/** The dump number and thread of a file named `<out>.<dump>-<thread>`; null for any other name. */
export function dumpOf(fileName, out) {
  const match = new RegExp(`^${escapeRegExp(out)}\\.(\\d+)-(\\d+)$`).exec(fileName)
  return match === null ? null : { dump: Number(match[1]), thread: Number(match[2]) }
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * The instructions of dump `dump` of the run writing to `outFile`: the main thread's, and those of
 * every other thread (V8's compilers and collector helpers, libuv's pool) together.
 */
export function readDump(outFile, dump) {
  const out = basename(outFile)
  let main = 0
  let others = 0
  for (const name of readdirSync(dirname(outFile))) {
    const of = dumpOf(name, out)
    if (of === null || of.dump !== dump) continue
    const total = dumpTotal(readFileSync(join(dirname(outFile), name), 'utf8')) ?? 0
    if (of.thread === 1) main += total
    else others += total
  }
  return { main, others }
}

/**
 * The phases in which V8 had settled: its other threads ran under `share` of the main thread's
 * instructions. A phase in which it still compiles the code it runs, or recompiles it, counts
 * thousands of instructions more on the main thread too, and differs from run to run.
 */
export function settledPhases(phases, share = 0.02) {
  return phases.filter((phase) => phase.others < phase.main * share)
}
