import { join } from 'node:path'
import { ROOT } from './lectern.mjs'

const number = (name, fallback) => {
  const value = process.env[name]
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!Number.isFinite(parsed) || parsed < 0)
    throw new Error(`${name} must be a non-negative number (got ${value})`)
  return parsed
}

const oneOf = (name, values, fallback) => {
  const value = process.env[name]
  if (value === undefined || value === '') return fallback
  if (!values.includes(value)) throw new Error(`${name} must be one of ${values.join(', ')} (got ${value})`)
  return value
}

/**
 * The harness's settings, all from the environment. A full run uses the 1k, 100k and 1M datasets;
 * `BENCH_QUICK=1` uses 1k and 100k with short runs.
 */
export function readConfig() {
  const quick = process.env.BENCH_QUICK === '1'
  const sizes = (process.env.BENCH_SIZES ?? (quick ? '1000,100000' : '1000,100000,1000000'))
    .split(',')
    .map((s) => Number(s.trim()))
  if (sizes.some((s) => !Number.isInteger(s) || s < 100))
    throw new Error('BENCH_SIZES: integers of at least 100')
  sizes.sort((a, b) => a - b)
  const duration = number('BENCH_DURATION', quick ? 3 : 10)
  return {
    quick,
    // Some scenarios, sizes or servers only: reported beside the record, never as it.
    partial:
      !quick &&
      (process.env.BENCH_SCENARIOS !== undefined ||
        process.env.BENCH_SIZES !== undefined ||
        process.env.BENCH_PG === '0'),
    seed: process.env.BENCH_SEED || 'lectern',
    sizes,
    mainSize: sizes[sizes.length - 1],
    duration,
    warmup: number('BENCH_WARMUP', quick ? 1 : 2),
    soakDuration: number('BENCH_SOAK_DURATION', quick ? 10 : 60),
    connections: number('BENCH_CONNECTIONS', 10),
    rate: number('BENCH_RATE', 2000),
    scenarios: process.env.BENCH_SCENARIOS
      ? process.env.BENCH_SCENARIOS.split(',').map((s) => s.trim())
      : null,
    dataDir: process.env.BENCH_DATA_DIR || join(ROOT, 'bench', 'data'),
    resultsDir: join(ROOT, 'bench', 'results'),
    reimport: process.env.BENCH_REIMPORT === '1',
    waitQuietS: number('BENCH_WAIT_QUIET', 0),
    postgres: process.env.BENCH_PG !== '0',
    postgresUrl: process.env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/test',
    // A Redis database of its own (index 13), so the run's counters never mix with anyone else's keys.
    redisUrl: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/13',
    // Reads under writes: visitors' posts through the intake (`intake`) or inbox updates (`updates`).
    writer: oneOf('BENCH_WRITER', ['intake', 'updates'], 'intake'),
    // Reads under writes: each list's run at each write rate, the writer turned off and on in
    // slices of `rwSliceMs` (about 120 whole pairs in a full run's 60 s: the 31 pairs of 16 s left
    // the target inside the median's 95% interval in 16 verdicts of 20).
    rwDuration: number('BENCH_RW_DURATION', quick ? 6 : 60),
    rwWarmup: number('BENCH_RW_WARMUP', 1),
    rwSliceMs: number('BENCH_RW_SLICE_MS', 250),
    // The intake run: concurrent posting clients (each post from one of as many addresses), and the
    // post rate while the hot list is read.
    intakeClients: number('BENCH_INTAKE_CLIENTS', 100),
    intakeReadRate: number('BENCH_INTAKE_READ_RATE', 200),
    // The hot list read while the post writer is turned off and on in slices of `rwSliceMs`.
    intakeReadsDuration: number('BENCH_INTAKE_READS_DURATION', quick ? 10 : 30),
    // The before/after run: the built tree of the earlier commit, and A/B rounds per measurement.
    beforeDir: process.env.BENCH_BEFORE_DIR || join(ROOT, 'bench', 'data', 'before'),
    abRounds: number('BENCH_AB_ROUNDS', 3),
    abWriteRates: (process.env.BENCH_AB_WRITES ?? '0,5,50').split(',').map((s) => Number(s.trim())),
    // Extra Node flags of the measured servers, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` for a profile.
    serverNodeArgs: (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  }
}
