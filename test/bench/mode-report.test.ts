import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
// @ts-expect-error: the benchmark is plain JavaScript, without declarations.
import { writeModeReport } from '../../bench/lib/mode-report.mjs'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** An intake run's results with no measurement in it, as the report needs them. */
const results = {
  kind: 'intake',
  startedAt: '2026-12-06T01:48:47.009Z',
  finishedAt: '2026-12-06T01:55:47.747Z',
  settings: { seed: 'lectern', size: 100000 },
  machine: {
    commit: 'abc1234',
    build: 'def5678',
    cores: 2,
    cpu: 'test CPU',
    memoryGb: 24,
    node: 'v20',
    pinned: true,
    loadAverage: [0.5, 0.5, 0.5],
  },
  imports: [],
  runs: [],
  notes: [],
}

function written(quick: boolean): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'lectern-mode-report-'))
  dirs.push(dir)
  writeModeReport(results, { quick, resultsDir: dir })
  return readdirSync(dir).sort()
}

describe('the intake and before/after reports', () => {
  it('are named by date and kind, for the record', () => {
    expect(written(false)).toEqual(['2026-12-06-0148-intake.json', '2026-12-06-0148-intake.md'])
  })

  it("of a quick run carry -quick, which the repository ignores, as it does the main run's quick reports", () => {
    expect(written(true)).toEqual(['2026-12-06-0148-intake-quick.json', '2026-12-06-0148-intake-quick.md'])
    const ignored = readFileSync(join(__dirname, '..', '..', '.gitignore'), 'utf8').split('\n')
    expect(ignored).toContain('bench/results/*-quick.*')
  })
})
