import { describe, expect, it } from 'vitest'
// @ts-expect-error: the benchmark is plain JavaScript, without declarations.
import * as rw from '../../bench/lib/reads-under-writes.mjs'

// The benchmark judges two issues' targets on these figures: a pairing mistake (a run with writes
// compared with another round's run without) would pass or fail them on noise alone.

interface Side {
  reqPerSec: number
  p99: number | null
  serverCpuMsPer1k: number | null
}

const description = {
  bigFormId: 'frm_big',
  bigFormSubmissions: 1_000_000,
  smallFormId: 'frm_small',
  smallFormSubmissions: 1_000,
  counts: { forms: 50, pages: 200, redirects: 500 },
}

const side = (reqPerSec: number, p99 = 2) => ({
  reqPerSec,
  latencyMs: { p99 },
  serverCpuMsPer1k: 70,
})

/** An interleaved run of `list` at `writes`/s whose pairs answered `pairs` req/s ([without, with]). */
const run = (
  list: string,
  writes: number,
  pairs: [number, number][],
  p99s: [number, number] = [2, 2],
  server = 'sqlite',
) => ({
  server,
  scenario: `rw-${list}-${writes}`,
  list,
  listLabel: list,
  writes,
  writesPerSec: writes,
  interleaved: {
    sliceMs: 1000,
    guardMs: 50,
    pairs: pairs.map(([off, on]): { off: Side; on: Side } => ({
      off: { reqPerSec: off, p99: 2, serverCpuMsPer1k: 70 },
      on: { reqPerSec: on, p99: 2, serverCpuMsPer1k: 70 },
    })),
    off: side(pairs.reduce((sum, [off]) => sum + off, 0) / pairs.length, p99s[0]),
    on: side(pairs.reduce((sum, [, on]) => sum + on, 0) / pairs.length, p99s[1]),
  },
})

describe('reads under writes', () => {
  it('reads the written form and every other list at each write rate, one interleaved run each', () => {
    const steps = rw.readsUnderWritesSteps(description, {
      writeKind: 'intake',
      timing: { duration: 16, warmup: 1, sliceMs: 1000 },
    }) as { scenario: { id: string; path: string; sliceMs: number } }[]
    expect(steps.map((s) => s.scenario.id)).toEqual([
      'rw-written-form-5',
      'rw-written-form-50',
      'rw-other-form-5',
      'rw-other-form-50',
      'rw-forms-5',
      'rw-forms-50',
      'rw-pages-5',
      'rw-pages-50',
      'rw-redirects-5',
      'rw-redirects-50',
    ])
    expect(steps[0]?.scenario.path).toBe('/api/v1/forms/frm_big/submissions?page=1&pageSize=20')
    expect(steps[2]?.scenario.path).toBe('/api/v1/forms/frm_small/submissions?page=1&pageSize=20')
    expect(steps.every((s) => s.scenario.sliceMs === 1000)).toBe(true)
  })

  it('judges the median of the pairs, so that one disturbed pair does not decide', () => {
    const runs = [
      run('written-form', 50, [
        [10_000, 9_000],
        [5_000, 4_000],
        [8_000, 2_000],
      ]),
    ]
    const [cell] = rw.readsUnderWritesCells(runs)
    expect(cell.pairs).toEqual([0.9, 0.8, 0.25])
    expect(cell.ratio).toBe(0.8)
    const [row] = rw.evaluateReadsUnderWrites({ runs })
    expect(row.pass).toBe(true)
  })

  it('holds the written form to 0.8× and p99 at most twice, and every other list to 0.95×', () => {
    const rows = rw.evaluateReadsUnderWrites({
      runs: [
        run('written-form', 5, [[10_000, 8_500]], [2, 4.5]),
        run('written-form', 50, [[10_000, 8_500]], [2, 3.9]),
        run('redirects', 5, [[10_000, 9_400]]),
        run('forms', 5, [[10_000, 9_600]]),
      ],
    }) as { scenario: string; pass: boolean }[]
    expect(
      rows.map((r) => [r.scenario.split(':')[0], r.scenario.split(':')[1]?.split(',')[0]?.trim(), r.pass]),
    ).toEqual([
      ['Reads under 5 writes/s', 'written-form', false],
      ['Reads under 50 writes/s', 'written-form', true],
      ['Reads under 5 writes/s', 'redirects', false],
      ['Reads under 5 writes/s', 'forms', true],
    ])
  })

  it("judges no target on the bare server's runs, and names the floor at their rate beside each list's", () => {
    const pairs = (ratio: number): [number, number][] => [[10_000, ratio * 10_000]]
    const rows = rw.evaluateReadsUnderWrites({
      runs: [
        run('forms', 50, pairs(0.94)),
        run('forms', 50, pairs(0.96), [2, 2], 'bare'),
        run('forms', 50, pairs(0.93), [2, 2], 'postgres'),
        run('pages', 5, pairs(0.99)),
      ],
    }) as { scenario: string; measured: string; pass: boolean }[]
    expect(rows.map((r) => r.scenario)).toEqual([
      'Reads under 50 writes/s: forms, SQLite',
      'Reads under 50 writes/s: forms, PostgreSQL + Redis',
      'Reads under 5 writes/s: pages, SQLite',
    ])
    expect(rows[0]?.measured).toContain('the floor, bare node:http under the same posts: 0.96×')
    expect(rows[1]?.measured).toContain('the floor, bare node:http under the same posts: 0.96×')
    // No floor was measured at 5 writes/s.
    expect(rows[2]?.measured).not.toContain('floor')
    expect(rows.map((r) => r.pass)).toEqual([false, false, true])
  })

  it('shows the bare server among the runs of the section, as the floor', () => {
    const lines = rw.renderReadsUnderWrites({
      runs: [run('forms', 50, [[10_000, 9_600]], [2, 2], 'bare')],
    }) as string[]
    expect(lines.some((line) => line.startsWith('| bare node:http | forms | 50 |'))).toBe(true)
    expect(lines.join('\n')).toContain('is the floor')
  })

  it('leaves out a run that finished no pair', () => {
    expect(rw.readsUnderWritesCells([run('pages', 50, [])])).toEqual([])
  })

  it('says a verdict is within noise when the target lies inside the median interval, and only then', () => {
    const pairs = (ratios: number[]) => ratios.map((r): [number, number] => [10_000, r * 10_000])
    const spread = [0.86, 0.88, 0.9, 0.92, 0.93, 0.95, 0.97, 0.99, 1.0, 1.02]
    const tight = [0.96, 0.97, 0.97, 0.98, 0.98, 0.99, 0.99, 1.0, 1.0, 1.01]
    const [noisy, clear] = rw.evaluateReadsUnderWrites({
      runs: [run('forms', 50, pairs(spread)), run('pages', 50, pairs(tight))],
    }) as { measured: string; pass: boolean; undecided: boolean }[]
    expect(noisy).toMatchObject({ pass: false, undecided: true })
    expect(noisy?.measured).toContain('median 0.94× (95% interval 0.88–1.00)')
    expect(clear).toMatchObject({ pass: true, undecided: false })
    expect(clear?.measured).toContain('(95% interval 0.97–1.00)')
  })
})
