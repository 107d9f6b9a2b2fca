import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { sizeLabel } from './dataset.mjs'
import { lecternHome } from './lectern.mjs'
import { onCpu, runMeasured, SERVER_CPU } from './processes.mjs'

// The built code an imported database depends on: its schema and the importer. Changing either
// makes cached databases stale; read-path changes do not.
const IMPORT_CODE = ['dist/db/migrations', 'dist/services/import']

/** The `.js` files under `path` (or `path` itself), sorted. */
export function filesUnder(path) {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { withFileTypes: true })
    .flatMap((entry) => filesUnder(join(path, entry.name)))
    .filter((file) => file.endsWith('.js'))
    .sort()
}

/** A short hash of every built `.js` file: which build a run measured. */
export function buildFingerprint(from = lecternHome()) {
  const hash = createHash('sha256')
  for (const file of filesUnder(join(from, 'dist'))) hash.update(readFileSync(file))
  return hash.digest('hex').slice(0, 12)
}

/** A hash of the dataset file's identity and of the code that imports it. */
function importFingerprint(dataset, from) {
  const hash = createHash('sha256')
  hash.update(`${dataset.description.generatorVersion}:${statSync(dataset.file).size}\n`)
  for (const file of IMPORT_CODE.flatMap((p) => filesUnder(join(from, p)))) {
    hash.update(relative(from, file))
    hash.update(readFileSync(file))
  }
  return hash.digest('hex').slice(0, 16)
}

/**
 * `lectern import <file>` into `databaseUrl`, pinned to the server core, with its wall time and
 * peak RSS. Throws with Lectern's own message when the import fails.
 */
export async function importMeasured(databaseUrl, file, from = lecternHome()) {
  const [command, args] = onCpu(SERVER_CPU, process.execPath, [join(from, 'bin', 'lectern'), 'import', file])
  const env = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }
  delete env.REDIS_URL
  const result = await runMeasured(command, args, { env, cwd: from, timeoutMs: 60 * 60_000 })
  if (result.code !== 0) {
    throw new Error(
      `lectern import ${file} failed (${result.code ?? result.signal}): ${result.stderr.trim()}`,
    )
  }
  return {
    wallMs: result.wallMs,
    peakRssKb: result.peakRssKb,
    rssSource: result.rssSource,
    output: result.stdout.trim().split('\n').pop(),
  }
}

/**
 * Makes sure the dataset is imported into its own SQLite database, importing it again when the
 * dataset or the import code changed (or `reimport`). A cached database keeps the timing of the
 * import that built it.
 */
export async function ensureSqliteDatabase(
  dataset,
  { reimport },
  log,
  { from = lecternHome(), name = 'lectern' } = {},
) {
  const file = join(dataset.dir, `${name}.db`)
  const url = `sqlite:${file}`
  const manifestFile = join(dataset.dir, name === 'lectern' ? 'import.json' : `import-${name}.json`)
  const fingerprint = importFingerprint(dataset, from)
  if (!reimport && existsSync(file) && existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'))
    if (manifest.fingerprint === fingerprint)
      return { url, file, import: { ...manifest.import, cached: true } }
  }
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true })
  rmSync(manifestFile, { force: true })
  log(`importing the ${sizeLabel(dataset.description.size)} dataset into SQLite`)
  const measured = await importMeasured(url, dataset.file, from)
  const record = { ...measured, measuredAt: new Date().toISOString() }
  writeFileSync(manifestFile, `${JSON.stringify({ fingerprint, import: record }, null, 2)}\n`)
  log(`  ${measured.output} in ${(measured.wallMs / 1000).toFixed(1)} s, peak RSS ${mb(measured.peakRssKb)}`)
  return { url, file, import: { ...record, cached: false } }
}

const mb = (kb) => (kb === null ? '?' : `${Math.round(kb / 1024)} MB`)
