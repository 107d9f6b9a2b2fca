#!/usr/bin/env node
// Peak memory and time of `lectern import` on one million records of each kind.
//
//   node bench/import-memory.mjs [--records 1000000] [--kinds form,page,redirect,submission]
//                                [--dialect sqlite|postgres|both] [--lectern <checkout with dist/>]
//                                [--breakdown]
//
// Each kind gets an NDJSON file of its own in a temporary directory and a fresh database (a SQLite
// file, or a PostgreSQL schema selected through `search_path` as the tests do). The import runs as a
// child process under `/usr/bin/time -v`, whose "Maximum resident set size" is the peak RSS.
// `--breakdown` also samples `process.memoryUsage()` inside the import every 100 ms and prints, at
// the sample with the highest RSS, how much was the JavaScript heap and how much memory outside it
// (array buffers, such as the importer's packed string tables), to tell which one to work on.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { postgresExec, withSchema } from './lib/postgres.mjs'

const { values: options } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    kinds: { type: 'string', default: 'form,page,redirect,submission' },
    dialect: { type: 'string', default: 'sqlite' },
    lectern: { type: 'string', default: resolve(import.meta.dirname, '..') },
    breakdown: { type: 'boolean', default: false },
    postgres: {
      type: 'string',
      default: process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    },
  },
})
const count = Number(options.records)
const kinds = options.kinds.split(',')
const dialects = options.dialect === 'both' ? ['sqlite', 'postgres'] : [options.dialect]
const lectern = join(resolve(options.lectern), 'bin', 'lectern')

/** One small, valid record of `kind` with index `i`; ids and paths are unique per file. */
const RECORDS = {
  form: (i) => ({ kind: 'form', id: `form_${i}`, title: `Form ${i}` }),
  page: (i) => ({ kind: 'page', id: `page_${i}`, title: `Page ${i}`, slug: `p-${i}`, path: `/p/${i}` }),
  redirect: (i) => ({ kind: 'redirect', id: `redirect_${i}`, fromPath: `/old/${i}`, toPath: `/new/${i}` }),
  submission: (i) => ({ kind: 'submission', id: `submission_${i}`, formId: 'form_bench', data: { n: i } }),
}

async function writeFile(path, kind) {
  const out = createWriteStream(path)
  if (kind === 'submission')
    out.write(`${JSON.stringify({ kind: 'form', id: 'form_bench', title: 'Bench' })}\n`)
  let chunk = ''
  for (let i = 1; i <= count; i++) {
    chunk += `${JSON.stringify(RECORDS[kind](i))}\n`
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain')
      chunk = ''
    }
  }
  out.end(chunk)
  await once(out, 'finish')
}

/** Preloaded into the import with `--breakdown`: writes the sample with the highest RSS on exit. */
const SAMPLER = `import { writeFileSync } from 'node:fs'
let peak = { rss: 0 }
setInterval(() => {
  const usage = process.memoryUsage()
  if (usage.rss > peak.rss) peak = usage
}, 100).unref()
process.on('exit', () => writeFileSync(process.env.LECTERN_MEMORY_SAMPLE, JSON.stringify(peak)))
`

/** Runs the import under `/usr/bin/time -v`; peak RSS in MiB, seconds, and the exit status. */
async function measure(file, databaseUrl) {
  const started = process.hrtime.bigint()
  const sample = join(dir, 'memory-sample.json')
  const breakdown = options.breakdown
    ? {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${join(dir, 'sampler.mjs')}`.trim(),
        LECTERN_MEMORY_SAMPLE: sample,
      }
    : {}
  const child = spawn('/usr/bin/time', ['-v', lectern, 'import', file], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...breakdown },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  let stdout = ''
  child.stdout.on('data', (data) => {
    stdout += data
  })
  child.stderr.on('data', (data) => {
    stderr += data
  })
  const [code] = await once(child, 'close')
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const kib = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? Number.NaN)
  const failure =
    code === 0
      ? undefined
      : stderr
          .split('\n')
          .filter((line) => !line.startsWith('\t'))
          .slice(0, 5)
          .join(' | ')
  const mib = (bytes) => Math.round(bytes / 2 ** 20)
  let atPeak
  if (options.breakdown) {
    const usage = JSON.parse(readFileSync(sample, 'utf8'))
    atPeak = { heapMiB: mib(usage.heapTotal), outsideHeapMiB: mib(usage.external) }
  }
  return {
    peakMiB: Math.round(kib / 1024),
    atPeak,
    seconds: Math.round(seconds * 10) / 10,
    code,
    failure,
    stdout: stdout.trim(),
  }
}

const dir = mkdtempSync(join(tmpdir(), 'lectern-import-memory-'))
if (options.breakdown) writeFileSync(join(dir, 'sampler.mjs'), SAMPLER)
const results = []
try {
  for (const kind of kinds) {
    const file = join(dir, `${kind}s.ndjson`)
    await writeFile(file, kind)
    for (const dialect of dialects) {
      let databaseUrl
      let drop = async () => {}
      if (dialect === 'sqlite') {
        databaseUrl = `sqlite:${join(dir, `${kind}-${Date.now()}.db`)}`
      } else {
        const schema = `bench_import_${kind}_${Date.now()}`
        await postgresExec(options.postgres, `create schema ${schema}`)
        databaseUrl = withSchema(options.postgres, schema)
        drop = () => postgresExec(options.postgres, `drop schema if exists ${schema} cascade`)
      }
      const result = await measure(file, databaseUrl)
      await drop()
      results.push({ kind, dialect, records: count, ...result })
      console.log(
        `${kind.padEnd(10)} ${dialect.padEnd(8)} ${String(count).padStart(8)} records  peak RSS ${String(result.peakMiB).padStart(5)} MiB  ${String(result.seconds).padStart(6)} s${result.atPeak ? `  (at the peak: heap ${result.atPeak.heapMiB} MiB, outside it ${result.atPeak.outsideHeapMiB} MiB)` : ''}${result.failure ? `  FAILED (exit ${result.code}): ${result.failure}` : ''}`,
      )
    }
    rmSync(file, { force: true })
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(JSON.stringify(results))
