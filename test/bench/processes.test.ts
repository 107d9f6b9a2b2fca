import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: the benchmark is plain JavaScript, without declarations.
import { cpuSpentBetween, processCpuMs, processesCpuMs } from '../../bench/lib/processes.mjs'

// The post-cost script charges PostgreSQL's and Redis's processes with what a post costs them: the
// sum must cover every process of the name, and only the time spent between the two snapshots.

const comm = () => {
  const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8')
  return stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
}

describe('CPU time of the processes of one name', () => {
  it('finds this process by its name, with the CPU time /proc gives it', () => {
    const spent = processesCpuMs(comm()) as Map<string, number>
    const own = spent.get(String(process.pid))
    expect(own).toBeGreaterThan(0)
    expect(Math.abs((own as number) - processCpuMs(process.pid))).toBeLessThan(50)
  })

  it('counts only the time spent between two snapshots, by the processes in both', () => {
    const before = new Map([
      ['10', 100],
      ['11', 50],
      ['12', 7],
    ])
    const after = new Map([
      ['10', 130],
      ['11', 55],
      ['13', 1_000],
    ])
    // 12 exited and 13 started between them: neither's time can be told apart, so neither counts.
    expect(cpuSpentBetween(before, after)).toBe(35)
  })

  it('charges the time a busy process spends while it runs', () => {
    const name = comm()
    const before = processesCpuMs(name)
    // Busy until this process has used 200 ms of CPU by its own account, however loaded the machine.
    const start = processCpuMs(process.pid) as number
    while ((processCpuMs(process.pid) as number) - start < 200) Math.sqrt(Math.random())
    expect(cpuSpentBetween(before, processesCpuMs(name))).toBeGreaterThanOrEqual(200)
  })
})
