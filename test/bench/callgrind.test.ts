import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
// @ts-expect-error: the benchmark is plain JavaScript, without declarations.
import { dumpOf, dumpTotal, readDump, settledPhases } from '../../bench/lib/callgrind.mjs'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** The head of a callgrind dump as valgrind 3.19 writes it, counting `instructions`. */
const dump = (instructions: number, line: 'summary' | 'totals' = 'summary') =>
  `# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 4242\ncmd: node\npart: 2\nthread: 1\n\nevents: Ir\n${line}: ${instructions}\n\nfl=(1) ???\nfn=(1) 0x0000000000108e40\n0 3\n`

describe("reading callgrind's dumps", () => {
  it('reads the instructions a dump counts, on its summary or totals line', () => {
    expect(dumpTotal(dump(338_112_911))).toBe(338_112_911)
    expect(dumpTotal(dump(12, 'totals'))).toBe(12)
    expect(dumpTotal('# callgrind format\nversion: 1\n')).toBeNull()
  })

  it('tells the dump and thread of a file from its name, and no other file', () => {
    expect(dumpOf('run.out.3-01', 'run.out')).toEqual({ dump: 3, thread: 1 })
    expect(dumpOf('run.out.12-11', 'run.out')).toEqual({ dump: 12, thread: 11 })
    expect(dumpOf('run.out', 'run.out')).toBeNull()
    expect(dumpOf('runXout.3-01', 'run.out')).toBeNull()
    expect(dumpOf('other.out.3-01', 'run.out')).toBeNull()
  })

  it("adds up one dump's threads: the main thread alone, every other thread together", () => {
    const dir = mkdtempSync(join(tmpdir(), 'lectern-callgrind-'))
    dirs.push(dir)
    writeFileSync(join(dir, 'run.out.1-01'), dump(1_000))
    writeFileSync(join(dir, 'run.out.1-02'), dump(200))
    writeFileSync(join(dir, 'run.out.1-07'), dump(30))
    writeFileSync(join(dir, 'run.out.2-01'), dump(5_000))
    writeFileSync(join(dir, 'run.out.2-03'), dump(4))
    writeFileSync(join(dir, 'run.out'), 'not yet dumped')
    expect(readDump(join(dir, 'run.out'), 1)).toEqual({ main: 1_000, others: 230 })
    expect(readDump(join(dir, 'run.out'), 2)).toEqual({ main: 5_000, others: 4 })
    expect(readDump(join(dir, 'run.out'), 3)).toEqual({ main: 0, others: 0 })
  })

  it("keeps only the phases in which V8's other threads ran under 2% of the main thread", () => {
    const phases = [
      { main: 199_354, others: 140_158 },
      { main: 181_153, others: 7_962 },
      { main: 177_147, others: 2_469 },
      { main: 175_595, others: 3_600 },
    ]
    expect(settledPhases(phases)).toEqual([phases[2]])
    expect(settledPhases(phases, 0.05)).toEqual(phases.slice(1))
  })
})
