import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import { createRandom } from './random.mjs'

/** Bump when the generated records change, so cached files and databases are rebuilt. */
export const GENERATOR_VERSION = 1

/** Submissions in the small form that every dataset larger than it also holds (the page-1 comparison). */
export const SMALL_FORM_SUBMISSIONS = 1000
const OTHER_FORMS = 23
const SUBMISSIONS_PER_OTHER_FORM = 40
const PAGES = 500
const REDIRECTS = 500

const START = Date.UTC(2023, 0, 1)
const SPAN = Date.UTC(2025, 0, 1) - START

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Margaret', 'Linus']
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Hamilton']
const WORDS = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore ' +
  'et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip'
).split(' ')
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148',
]
const REFERRERS = [
  null,
  'https://www.google.com/',
  'https://example.com/contact',
  'https://example.com/blog/',
]

const timestamp = (ms) => `${new Date(ms).toISOString().slice(0, 19)}Z`

/**
 * What a dataset holds, derived from its seed and size alone: ids of the forms the scenarios use
 * and the record counts. `size` is the number of submissions in the big form.
 */
export function describeDataset(seed, size) {
  const random = createRandom(`${seed}:ids`)
  const bigFormId = `form_${random.base62(20)}`
  const smallFormId = `form_${random.base62(20)}`
  const hasSmallForm = size > SMALL_FORM_SUBMISSIONS
  const forms = 1 + (hasSmallForm ? 1 : 0) + OTHER_FORMS
  const submissions =
    size + (hasSmallForm ? SMALL_FORM_SUBMISSIONS : 0) + OTHER_FORMS * SUBMISSIONS_PER_OTHER_FORM
  return {
    generatorVersion: GENERATOR_VERSION,
    seed,
    size,
    bigFormId,
    // In the smallest dataset the big form is itself the small one.
    smallFormId: hasSmallForm ? smallFormId : bigFormId,
    bigFormSubmissions: size,
    smallFormSubmissions: hasSmallForm ? SMALL_FORM_SUBMISSIONS : size,
    counts: { forms, submissions, pages: PAGES, redirects: REDIRECTS },
  }
}

/** A short label for a size: 1000 → 1k, 1000000 → 1M. */
export function sizeLabel(size) {
  if (size >= 1_000_000 && size % 1_000_000 === 0) return `${size / 1_000_000}M`
  if (size >= 1000 && size % 1000 === 0) return `${size / 1000}k`
  return String(size)
}

/** The directory holding one dataset's NDJSON file, its SQLite database and their manifests. */
export function datasetDir(dataDir, seed, size) {
  return join(dataDir, `${seed.replace(/[^A-Za-z0-9_-]/g, '_')}-${sizeLabel(size)}`)
}

/**
 * Makes sure the dataset's NDJSON file exists, generating it when it is missing or was made by an
 * older generator. Returns the file's path, its description and whether it was generated now.
 */
export function ensureDataset(dataDir, seed, size, log) {
  const dir = datasetDir(dataDir, seed, size)
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'dataset.ndjson')
  const manifestFile = join(dir, 'dataset.json')
  const description = describeDataset(seed, size)
  if (existsSync(manifestFile) && existsSync(file)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'))
    if (manifest.generatorVersion === GENERATOR_VERSION && manifest.bytes === statSync(file).size) {
      return { dir, file, description, generated: false, generateMs: manifest.generateMs }
    }
  }
  log(`generating ${sizeLabel(size)} dataset (seed ${seed})`)
  const started = performance.now()
  const partial = `${file}.partial`
  const lines = writeDataset(partial, description)
  renameSync(partial, file)
  const generateMs = Math.round(performance.now() - started)
  const bytes = statSync(file).size
  writeManifest(manifestFile, { ...description, lines, bytes, generateMs })
  return { dir, file, description, generated: true, generateMs }
}

function writeManifest(path, value) {
  const fd = openSync(`${path}.partial`, 'w')
  writeSync(fd, `${JSON.stringify(value, null, 2)}\n`)
  closeSync(fd)
  renameSync(`${path}.partial`, path)
}

/** Writes the records as NDJSON: forms, then pages and redirects, then submissions. */
function writeDataset(path, description) {
  const random = createRandom(`${description.seed}:records:${description.size}`)
  const fd = openSync(path, 'w')
  let buffer = ''
  let lines = 0
  const emit = (record) => {
    buffer += `${JSON.stringify(record)}\n`
    lines++
    if (buffer.length > 1 << 20) {
      writeSync(fd, buffer)
      buffer = ''
    }
  }
  const when = () => START + random.int(0, SPAN / 1000 - 1) * 1000
  const sentence = (min, max) => {
    const n = random.int(min, max)
    const words = []
    for (let i = 0; i < n; i++) words.push(random.pick(WORDS))
    const text = words.join(' ')
    return `${text[0].toUpperCase()}${text.slice(1)}.`
  }
  const stamps = () => {
    const created = when()
    const updated = Math.min(created + random.int(0, 30 * 86400) * 1000, START + SPAN - 1000)
    return { createdAt: timestamp(created), updatedAt: timestamp(updated) }
  }

  const forms = [{ id: description.bigFormId, title: 'Contact us', submissions: description.size }]
  if (description.smallFormId !== description.bigFormId) {
    forms.push({
      id: description.smallFormId,
      title: 'Newsletter sign-up',
      submissions: SMALL_FORM_SUBMISSIONS,
    })
  }
  const ids = createRandom(`${description.seed}:other-forms`)
  for (let i = 0; i < OTHER_FORMS; i++) {
    forms.push({
      id: `form_${ids.base62(20)}`,
      title: `Survey ${i + 1}`,
      submissions: SUBMISSIONS_PER_OTHER_FORM,
    })
  }
  for (const [i, form] of forms.entries()) {
    emit({
      kind: 'form',
      id: form.id,
      title: form.title,
      description: random.chance(0.3) ? null : sentence(6, 14),
      isActive: i < 2 || random.chance(0.8),
      ...stamps(),
    })
  }
  for (let i = 0; i < PAGES; i++) {
    const slug = `page-${i + 1}`
    const published = random.chance(0.8)
    const { createdAt, updatedAt } = stamps()
    emit({
      kind: 'page',
      id: `page_${random.base62(20)}`,
      title: sentence(2, 6).slice(0, -1),
      slug,
      path: i === 0 ? '/' : `/${random.pick(['blog', 'docs', 'about', 'news'])}/${slug}`,
      pageType: random.pick(['page', 'page', 'page', 'post', 'landing']),
      isPublished: published,
      publishedAt: published ? updatedAt : null,
      createdAt,
      updatedAt,
    })
  }
  for (let i = 0; i < REDIRECTS; i++) {
    emit({
      kind: 'redirect',
      id: `redirect_${random.base62(20)}`,
      fromPath: `/old/${i + 1}`,
      toPath: `/new/${random.pick(['blog', 'docs', 'about'])}/${i + 1}`,
      type: random.chance(0.7) ? 'permanent' : 'temporary',
      isActive: random.chance(0.9),
      ...stamps(),
    })
  }
  for (const form of forms) {
    for (let i = 0; i < form.submissions; i++) {
      const first = random.pick(FIRST)
      const last = random.pick(LAST)
      const email = `${first.toLowerCase()}.${last.toLowerCase()}${random.int(1, 9999)}@example.com`
      emit({
        kind: 'submission',
        id: `submission_${random.base62(20)}`,
        formId: form.id,
        data: { name: `${first} ${last}`, email, message: sentence(8, 30) },
        ipAddress: `203.0.${random.int(0, 255)}.${random.int(1, 254)}`,
        userAgent: random.pick(AGENTS),
        referrer: random.pick(REFERRERS),
        submittedBy: null,
        isRead: random.chance(0.6),
        isStarred: random.chance(0.1),
        notes: random.chance(0.9) ? null : sentence(3, 10),
        ...stamps(),
      })
    }
  }
  writeSync(fd, buffer)
  closeSync(fd)
  return lines
}
