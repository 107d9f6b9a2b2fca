import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { extname } from 'node:path'
import { createInterface } from 'node:readline'
import type { Insertable, Kysely, Transaction } from 'kysely'
import { isUniqueViolation, translateDatabaseError } from '../db/client.js'
import { guarded } from '../db/repositories/content.js'
import type {
  Database,
  Flag,
  FormsTable,
  PagesTable,
  RedirectsTable,
  SubmissionsTable,
} from '../db/tables.js'
import { ValidationError } from '../errors.js'
import { newId } from '../ids.js'
import { now as currentTime, parseTimestamp } from '../time.js'
import {
  findRedirectChains,
  findRedirectLoops,
  type RedirectEdge,
  redirectPathProblem,
} from './redirect-rules.js'

/** The kinds of record an import holds (the `kind` of an NDJSON line). */
export type ImportKind = 'form' | 'submission' | 'page' | 'redirect'

/** A number per resource, named as the JSON import format names its arrays. */
export interface KindCounts {
  forms: number
  submissions: number
  pages: number
  redirects: number
}

/**
 * What an import did. `counts` are the records read per kind; each record either `created` a row
 * or `updated` one (a row that existed before, or that an earlier record of the same file wrote),
 * so `created + updated = counts` for every kind.
 */
export interface ImportResult {
  counts: KindCounts
  created: KindCounts
  updated: KindCounts
  /** Things that were imported but deserve a look, such as redirect chains; each with its location. */
  warnings: string[]
}

/** At most this many problems are listed; a final entry says how many more there were. */
export const MAX_LISTED_PROBLEMS = 100

/**
 * An import was refused and nothing was written. `problems` lists every problem with its location
 * (`line 12 (submission): formId 'form_x' does not exist`, `submissions[3].data: must be …`), the
 * first {@link MAX_LISTED_PROBLEMS} of them in file order, then `…and N more problems`.
 */
export class ImportError extends ValidationError {
  /** How many problems were found in all, listed or not. */
  readonly problemCount: number

  constructor(problems: readonly string[], problemCount: number = problems.length) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS)
    const unlisted = problemCount - listed.length
    if (unlisted > 0) listed.push(`…and ${unlisted} more ${plural(unlisted, 'problem')}`)
    super(`Import refused: ${problemCount} ${plural(problemCount, 'problem')}, nothing was written`, listed)
    this.name = 'ImportError'
    this.problemCount = problemCount
  }
}

/** The JSON import format: any key may be absent. Each record has the API's camelCase fields. */
export interface ImportDocument {
  forms?: unknown[]
  submissions?: unknown[]
  pages?: unknown[]
  redirects?: unknown[]
}

/**
 * The content importer of SPEC §4. It validates everything first, then writes everything in one
 * transaction, or throws {@link ImportError} listing every problem and writes nothing.
 */
export function createImporter(db: Kysely<Database>) {
  return {
    /**
     * Imports a `.json` document or a `.ndjson` file (one record per line with a `kind`). NDJSON is
     * streamed twice, validating then writing, and never held in memory: memory grows with the
     * number of forms, pages and redirects, not of submissions. A `.json` file is parsed whole, so
     * large imports belong in NDJSON.
     */
    async importFile(path: string): Promise<ImportResult> {
      const extension = extname(path).toLowerCase()
      if (extension !== '.json' && extension !== '.ndjson') {
        throw new ImportError([
          `'${path}' is neither a .json nor a .ndjson file; the file name's extension says which format it holds`,
        ])
      }
      const before = await fileVersion(path)
      if (extension === '.json') return runImport(db, await readJsonDocument(path))
      const source = ndjsonSource(path)
      return runImport(db, source, async () => {
        const after = await fileVersion(path)
        if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) throw fileChangedError()
      })
    },

    /**
     * Imports a document already in memory, shaped like {@link ImportDocument} (parsed by a caller
     * or built by the demo); it is validated exactly like a JSON file, and its problems are located
     * the same way: `pages[2].path: …`.
     */
    importRecords(document: unknown): Promise<ImportResult> {
      return runImport(db, jsonSource(document))
    },
  }
}

export type Importer = ReturnType<typeof createImporter>

const COLLECTIONS = ['forms', 'submissions', 'pages', 'redirects'] as const
type Collection = (typeof COLLECTIONS)[number]
const KIND_OF: Record<Collection, ImportKind> = {
  forms: 'form',
  submissions: 'submission',
  pages: 'page',
  redirects: 'redirect',
}
const KINDS: readonly ImportKind[] = ['form', 'submission', 'page', 'redirect']

const BATCH_SIZE = 500
/** Distinct form ids referenced before their form was seen; beyond this a second pass checks them. */
const MAX_PENDING_FORM_IDS = 100_000
const MAX_ID_LENGTH = 200
const MAX_LISTED_WARNINGS = 100

type JsonObject = Record<string, unknown>

/** Where a record or a problem sits: an NDJSON line, an item of a JSON array, or the file itself. */
type Location =
  | { style: 'line'; order: number; line: number; kind?: ImportKind }
  | { style: 'item'; order: number; collection: Collection; index: number }
  | { style: 'file'; order: number }

interface FieldProblem {
  field?: string
  /** A predicate that follows the field name: `must be a boolean`, `'form_x' does not exist`. */
  message: string
}

type SourceEntry =
  | { kind: ImportKind; record: JsonObject; location: Location }
  | { problem: FieldProblem; location: Location }

/** Records in file order. Iterated more than once: to validate, to recheck form ids, to write. */
interface RecordSource {
  /** Problems with the file as a whole (syntax, top-level keys); records are not read when present. */
  fileProblems: FieldProblem[]
  entries(): AsyncIterable<SourceEntry[]>
}

function formatProblem(location: Location, problem: FieldProblem): string {
  const { field, message } = problem
  switch (location.style) {
    case 'line':
      return `line ${location.line}${location.kind ? ` (${location.kind})` : ''}: ${field ? `${field} ` : ''}${message}`
    case 'item':
      return `${location.collection}[${location.index}]${field ? `.${field}` : ''}: ${message}`
    case 'file':
      return field ? `${field}: ${message}` : message
  }
}

/** A short reference to a record from another record's problem: `line 3`, `pages[0]`. */
function describeLocation(location: Location): string {
  switch (location.style) {
    case 'line':
      return `line ${location.line}`
    case 'item':
      return `${location.collection}[${location.index}]`
    case 'file':
      return 'the file'
  }
}

/**
 * Keeps the first `limit` messages in file order and counts the rest. Messages arrive mostly in
 * order, but checks that need the whole file (unknown forms, duplicate paths) add earlier ones late.
 */
class MessageList {
  private kept: { order: number; text: string }[] = []
  total = 0

  constructor(private readonly limit: number) {}

  add(order: number, text: string): void {
    this.total++
    this.kept.push({ order, text })
    if (this.kept.length > this.limit * 4) this.trim()
  }

  texts(): string[] {
    this.trim()
    return this.kept.map((entry) => entry.text)
  }

  private trim(): void {
    // A stable sort keeps several problems of one record in the order they were found.
    this.kept.sort((a, b) => a.order - b.order)
    if (this.kept.length > this.limit) this.kept.length = this.limit
  }
}

interface Timestamps {
  createdAt: string | undefined
  updatedAt: string | undefined
}

interface FormDraft extends Timestamps {
  id: string
  title: string
  description: string | null
  isActive: boolean
}

interface SubmissionDraft extends Timestamps {
  /** Absent when the record has none; generated when written, so the validating pass skips it. */
  id: string | undefined
  formId: string
  data: JsonObject
  ipAddress: string | null
  userAgent: string | null
  referrer: string | null
  submittedBy: string | null
  isRead: boolean
  isStarred: boolean
  notes: string | null
}

interface PageDraft extends Timestamps {
  id: string
  title: string
  slug: string
  path: string
  pageType: string
  isPublished: boolean
  publishedAt: string | null | undefined
}

interface RedirectDraft extends Timestamps {
  id: string
  fromPath: string
  toPath: string
  type: 'permanent' | 'temporary'
  isActive: boolean
}

const FIELDS: Record<ImportKind, ReadonlySet<string>> = {
  form: new Set(['kind', 'id', 'title', 'description', 'isActive', 'createdAt', 'updatedAt']),
  submission: new Set([
    'kind',
    'id',
    'formId',
    'data',
    'ipAddress',
    'userAgent',
    'referrer',
    'submittedBy',
    'isRead',
    'isStarred',
    'notes',
    'createdAt',
    'updatedAt',
  ]),
  page: new Set([
    'kind',
    'id',
    'title',
    'slug',
    'path',
    'pageType',
    'isPublished',
    'publishedAt',
    'createdAt',
    'updatedAt',
  ]),
  redirect: new Set(['kind', 'id', 'fromPath', 'toPath', 'type', 'isActive', 'createdAt', 'updatedAt']),
}

/** A plain object, as `JSON.parse` makes them; a `Date` or a `Map` handed to `importRecords` is not one. */
function isObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object')
    return isObject(value) ? 'an object' : `a ${value.constructor?.name ?? 'object'}`
  return `a ${typeof value}`
}

/**
 * Reads the fields of one record, collecting a problem per bad field instead of stopping at the
 * first. A failed read returns a placeholder of the right type; callers check `problems` before use.
 */
class FieldReader {
  readonly problems: FieldProblem[] = []

  constructor(
    private readonly record: JsonObject,
    kind: ImportKind,
  ) {
    const allowed = FIELDS[kind]
    for (const key of Object.keys(record)) {
      if (allowed.has(key)) continue
      const suggestion = closestField(key, allowed)
      this.problems.push({
        message: `unknown field '${key}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`,
      })
    }
    const declared = record.kind
    if (declared !== undefined && declared !== kind) {
      this.problems.push({
        field: 'kind',
        message: `must be '${kind}' here (got ${JSON.stringify(declared)})`,
      })
    }
  }

  id(): string | undefined {
    const value = this.record.id
    if (value === undefined) return undefined
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH) {
      this.fail('id', `must be a non-empty string of at most ${MAX_ID_LENGTH} characters`)
      return undefined
    }
    return value
  }

  /** A required string; `nonEmpty` also refuses one that is only whitespace. */
  string(field: string, nonEmpty: boolean): string {
    const value = this.record[field]
    if (value === undefined) return this.fail(field, 'is required', '')
    if (typeof value !== 'string')
      return this.fail(field, `must be a string (got ${describeJsonType(value)})`, '')
    if (nonEmpty && value.trim() === '') return this.fail(field, 'must not be empty', '')
    return value
  }

  /** An optional non-empty string with a default. */
  optionalString(field: string, fallback: string): string {
    const value = this.record[field]
    if (value === undefined) return fallback
    if (typeof value !== 'string' || value.trim() === '') {
      return this.fail(field, `must be a non-empty string (got ${describeJsonType(value)})`, fallback)
    }
    return value
  }

  nullableString(field: string): string | null {
    const value = this.record[field]
    if (value === undefined || value === null) return null
    if (typeof value !== 'string')
      return this.fail(field, `must be a string or null (got ${describeJsonType(value)})`, null)
    return value
  }

  boolean(field: string, fallback: boolean): boolean {
    const value = this.record[field]
    if (value === undefined) return fallback
    if (typeof value !== 'boolean') {
      return this.fail(field, `must be true or false (got ${JSON.stringify(value)})`, fallback)
    }
    return value
  }

  /** An ISO 8601 date-time in canonical UTC form; `undefined` when absent, `null` only if allowed. */
  timestamp(field: string): string | undefined
  timestamp(field: string, nullable: true): string | null | undefined
  timestamp(field: string, nullable = false): string | null | undefined {
    const value = this.record[field]
    if (value === undefined) return undefined
    if (value === null && nullable) return null
    if (typeof value === 'string') {
      const parsed = parseTimestamp(value)
      if (parsed !== null) return parsed
    }
    return this.fail(
      field,
      `must be an ISO 8601 date-time such as 2024-01-05T10:00:00Z${nullable ? ' or null' : ''} (got ${JSON.stringify(value)})`,
      undefined,
    )
  }

  object(field: string): JsonObject {
    const value = this.record[field]
    if (value === undefined) return this.fail(field, 'is required', {})
    if (!isObject(value))
      return this.fail(field, `must be a JSON object (got ${describeJsonType(value)})`, {})
    return value
  }

  oneOf<T extends string>(field: string, values: readonly T[], fallback: T): T {
    const value = this.record[field]
    if (value === undefined) return fallback
    if (typeof value === 'string' && (values as readonly string[]).includes(value)) return value as T
    return this.fail(
      field,
      `must be ${values.map((v) => `'${v}'`).join(' or ')} (got ${JSON.stringify(value)})`,
      fallback,
    )
  }

  fail<T>(field: string, message: string, placeholder?: T): T {
    this.problems.push({ field, message })
    return placeholder as T
  }
}

function readForm(reader: FieldReader): FormDraft {
  return {
    id: reader.id() ?? newId('form'),
    title: reader.string('title', true),
    description: reader.nullableString('description'),
    isActive: reader.boolean('isActive', true),
    createdAt: reader.timestamp('createdAt'),
    updatedAt: reader.timestamp('updatedAt'),
  }
}

function readSubmission(reader: FieldReader): SubmissionDraft {
  return {
    id: reader.id(),
    formId: reader.string('formId', true),
    data: reader.object('data'),
    ipAddress: reader.nullableString('ipAddress'),
    userAgent: reader.nullableString('userAgent'),
    referrer: reader.nullableString('referrer'),
    submittedBy: reader.nullableString('submittedBy'),
    isRead: reader.boolean('isRead', false),
    isStarred: reader.boolean('isStarred', false),
    notes: reader.nullableString('notes'),
    createdAt: reader.timestamp('createdAt'),
    updatedAt: reader.timestamp('updatedAt'),
  }
}

function readPage(reader: FieldReader): PageDraft {
  const draft: PageDraft = {
    id: reader.id() ?? newId('page'),
    title: reader.string('title', true),
    slug: reader.string('slug', false),
    path: reader.string('path', true),
    pageType: reader.optionalString('pageType', 'page'),
    isPublished: reader.boolean('isPublished', false),
    publishedAt: reader.timestamp('publishedAt', true),
    createdAt: reader.timestamp('createdAt'),
    updatedAt: reader.timestamp('updatedAt'),
  }
  if (draft.path !== '' && !draft.path.startsWith('/')) reader.fail('path', "must start with '/'")
  return draft
}

function readRedirect(reader: FieldReader): RedirectDraft {
  const draft: RedirectDraft = {
    id: reader.id() ?? newId('redirect'),
    fromPath: reader.string('fromPath', true),
    toPath: reader.string('toPath', true),
    type: reader.oneOf('type', ['permanent', 'temporary'] as const, 'permanent'),
    isActive: reader.boolean('isActive', true),
    createdAt: reader.timestamp('createdAt'),
    updatedAt: reader.timestamp('updatedAt'),
  }
  for (const field of ['fromPath', 'toPath'] as const) {
    const problem = draft[field] === '' ? null : redirectPathProblem(draft[field])
    if (problem !== null) reader.fail(field, problem)
  }
  return draft
}

/** A known field that `key` is probably a typo or a snake_case spelling of, if any. */
function closestField(key: string, allowed: ReadonlySet<string>): string | undefined {
  const loose = (name: string) => name.toLowerCase().replace(/[_-]/g, '')
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of allowed) {
    if (loose(candidate) === loose(key)) return candidate
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
    }
    previous = current
  }
  return previous[b.length]
}

/** A record kept for writing, with where it came from and how many records of the file had its id. */
interface Located<T> {
  draft: T
  location: Location
  occurrences: number
}

/**
 * Everything the validating pass learns: the forms, pages and redirects to write (held in memory;
 * they are few), counts, problems and warnings. Submissions are only checked and counted here.
 */
class ImportPlan {
  readonly problems = new MessageList(MAX_LISTED_PROBLEMS)
  readonly warnings = new MessageList(MAX_LISTED_WARNINGS)
  readonly counts: KindCounts = { forms: 0, submissions: 0, pages: 0, redirects: 0 }
  readonly forms = new Map<string, Located<FormDraft>>()
  readonly pages = new Map<string, Located<PageDraft>>()
  readonly redirects = new Map<string, Located<RedirectDraft>>()
  /** Form ids submissions named before the form appeared (or that do not exist at all). */
  private readonly pendingFormIds = new Set<string>()
  private pendingOverflow = false

  constructor(
    private readonly db: Kysely<Database>,
    private readonly databaseFormIds: ReadonlySet<string>,
  ) {}

  report(location: Location, problem: FieldProblem): void {
    this.problems.add(location.order, formatProblem(location, problem))
  }

  accept(entry: SourceEntry): void {
    if ('problem' in entry) {
      this.report(entry.location, entry.problem)
      return
    }
    const { kind, record, location } = entry
    const reader = new FieldReader(record, kind)
    switch (kind) {
      case 'form':
        this.counts.forms++
        this.keep(this.forms, readForm(reader), reader, location)
        break
      case 'page':
        this.counts.pages++
        this.keep(this.pages, readPage(reader), reader, location)
        break
      case 'redirect':
        this.counts.redirects++
        this.keep(this.redirects, readRedirect(reader), reader, location)
        break
      case 'submission': {
        this.counts.submissions++
        const { formId } = readSubmission(reader)
        for (const problem of reader.problems) this.report(location, problem)
        if (formId !== '' && !this.formExists(formId) && !this.pendingFormIds.has(formId)) {
          if (this.pendingFormIds.size < MAX_PENDING_FORM_IDS) this.pendingFormIds.add(formId)
          else this.pendingOverflow = true
        }
        break
      }
    }
  }

  private keep<T extends { id: string }>(
    kept: Map<string, Located<T>>,
    draft: T,
    reader: FieldReader,
    location: Location,
  ): void {
    for (const problem of reader.problems) this.report(location, problem)
    const earlier = kept.get(draft.id)
    if (earlier) {
      this.warnings.add(
        location.order,
        formatProblem(location, {
          message: `id '${draft.id}' also appears at ${describeLocation(earlier.location)}; this later record wins`,
        }),
      )
    }
    if (reader.problems.length > 0) return
    kept.set(draft.id, { draft, location, occurrences: (earlier?.occurrences ?? 0) + 1 })
  }

  private formExists(id: string): boolean {
    return this.databaseFormIds.has(id) || this.forms.has(id)
  }

  /** The checks that need every record: form references, unique page paths, redirect rules. */
  async finish(source: RecordSource): Promise<void> {
    const unresolved = [...this.pendingFormIds].some((id) => !this.forms.has(id))
    // Only the ids are kept while streaming; a second read finds the lines that name a missing form.
    if (unresolved || this.pendingOverflow) await this.reportMissingForms(source)
    await this.checkPages()
    await this.checkRedirects()
  }

  private async reportMissingForms(source: RecordSource): Promise<void> {
    for await (const batch of source.entries()) {
      for (const entry of batch) {
        if ('problem' in entry || entry.kind !== 'submission') continue
        const formId = entry.record.formId
        if (typeof formId === 'string' && formId.trim() !== '' && !this.formExists(formId)) {
          this.report(entry.location, { field: 'formId', message: `'${formId}' does not exist` })
        }
      }
    }
  }

  private async checkPages(): Promise<void> {
    const byPath = new Map<string, Located<PageDraft>>()
    for (const page of [...this.pages.values()].sort(byOrder)) {
      const holder = byPath.get(page.draft.path)
      if (holder) {
        this.report(page.location, {
          field: 'path',
          message: `'${page.draft.path}' is already the path of the page at ${describeLocation(holder.location)}`,
        })
      } else {
        byPath.set(page.draft.path, page)
      }
    }
    for (const paths of chunks([...byPath.keys()], BATCH_SIZE)) {
      const rows = await guarded(() =>
        this.db.selectFrom('pages').select(['id', 'path']).where('path', 'in', paths).execute(),
      )
      for (const row of rows) {
        // A row this import replaces gives up its path; the file's own duplicates were found above.
        if (this.pages.has(row.id)) continue
        const page = byPath.get(row.path)
        if (page) {
          this.report(page.location, {
            field: 'path',
            message: `'${row.path}' is already the path of page '${row.id}' in the database`,
          })
        }
      }
    }
  }

  private async checkRedirects(): Promise<void> {
    if (this.redirects.size === 0) return
    interface Node extends RedirectEdge {
      id: string
      location?: Location
    }
    // Inactive redirects count too: switching one on later must not be able to close a loop.
    const rows = await guarded(() =>
      this.db.selectFrom('redirects').select(['id', 'from_path', 'to_path']).execute(),
    )
    const stored: Node[] = rows
      .filter((row) => !this.redirects.has(row.id))
      .map((row) => ({ id: row.id, fromPath: row.from_path, toPath: row.to_path }))
    const imported: Node[] = [...this.redirects.values()].sort(byOrder).map(({ draft, location }) => ({
      id: draft.id,
      fromPath: draft.fromPath,
      toPath: draft.toPath,
      location,
    }))

    // Stored rows first, so that a clash is reported on the file's record, which is what can change.
    const byFrom = new Map<string, Node>()
    for (const node of [...stored, ...imported]) {
      const holder = byFrom.get(node.fromPath)
      if (!holder) {
        byFrom.set(node.fromPath, node)
      } else if (node.location) {
        const other = holder.location
          ? `the redirect at ${describeLocation(holder.location)}`
          : `redirect '${holder.id}' in the database`
        this.report(node.location, {
          field: 'fromPath',
          message: `'${node.fromPath}' is already redirected by ${other}`,
        })
      }
    }

    const edges = [...byFrom.values()]
    const firstImported = (paths: readonly string[]): Node | undefined =>
      paths
        .map((path) => byFrom.get(path))
        .filter((node): node is Node & { location: Location } => node?.location !== undefined)
        .sort(byOrder)[0]

    for (const loop of findRedirectLoops(edges)) {
      const culprit = firstImported(loop.slice(0, -1))
      // A loop made only of stored rows predates this import; refusing the import would not fix it.
      if (!culprit?.location) continue
      this.report(culprit.location, {
        field: 'toPath',
        message: `creates a redirect loop: ${rotateLoop(loop, culprit.fromPath).join(' → ')}`,
      })
    }

    for (const chain of findRedirectChains(edges)) {
      const start = byFrom.get(chain.fromPath)
      const culprit = start?.location ? start : firstImported(chain.via)
      if (!culprit?.location) continue
      const route = [chain.fromPath, ...chain.via, chain.finalPath].join(' → ')
      const origin = start?.location ? '' : ` (starting at redirect '${start?.id}' in the database)`
      this.warnings.add(
        culprit.location.order,
        formatProblem(culprit.location, {
          message: `redirect chain ${route}${origin}; consider pointing '${chain.fromPath}' straight at '${chain.finalPath}'`,
        }),
      )
    }
  }
}

const byOrder = (a: { location?: Location }, b: { location?: Location }) =>
  (a.location?.order ?? -1) - (b.location?.order ?? -1)

/** The same loop, starting (and ending) at `start`. */
function rotateLoop(loop: readonly string[], start: string): string[] {
  const cycle = loop.slice(0, -1)
  const at = Math.max(cycle.indexOf(start), 0)
  const rotated = [...cycle.slice(at), ...cycle.slice(0, at)]
  return [...rotated, rotated[0]]
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}

async function runImport(
  db: Kysely<Database>,
  source: RecordSource,
  beforeCommit?: () => Promise<void>,
): Promise<ImportResult> {
  if (source.fileProblems.length > 0) {
    const location: Location = { style: 'file', order: 0 }
    throw new ImportError(source.fileProblems.map((problem) => formatProblem(location, problem)))
  }
  const formRows = await guarded(() => db.selectFrom('forms').select('id').execute())
  const plan = new ImportPlan(db, new Set(formRows.map((row) => row.id)))
  for await (const batch of source.entries()) for (const entry of batch) plan.accept(entry)
  await plan.finish(source)
  if (plan.problems.total > 0) throw new ImportError(plan.problems.texts(), plan.problems.total)

  const warnings = plan.warnings.texts()
  if (plan.warnings.total > MAX_LISTED_WARNINGS) {
    const unlisted = plan.warnings.total - MAX_LISTED_WARNINGS
    warnings.push(`…and ${unlisted} more ${plural(unlisted, 'warning')}`)
  }
  const created: KindCounts = { forms: 0, submissions: 0, pages: 0, redirects: 0 }
  const updated: KindCounts = { forms: 0, submissions: 0, pages: 0, redirects: 0 }
  const timestamp = currentTime()

  try {
    await db.transaction().execute(async (trx) => {
      const writer = new Writer(trx, timestamp, created, updated)
      await writer.writeForms([...plan.forms.values()])
      await writer.writePages([...plan.pages.values()])
      await writer.writeRedirects([...plan.redirects.values()])
      const written = await writer.writeSubmissions(source)
      if (written !== plan.counts.submissions) throw fileChangedError()
      await beforeCommit?.()
    })
  } catch (error) {
    if (error instanceof ImportError) throw error
    if (isUniqueViolation(error)) {
      throw new ImportError([
        `the database changed while importing (a path or id this import uses was taken meanwhile); run the import again`,
      ])
    }
    throw translateDatabaseError(error)
  }
  return { counts: plan.counts, created, updated, warnings }
}

function fileChangedError(): ImportError {
  return new ImportError(['the file changed while it was being imported; run the import again'])
}

const flag = (value: boolean): Flag => (value ? 1 : 0)

/**
 * Writes validated records inside the import's transaction, in multi-row upserts. A record without
 * `createdAt` keeps the creation time of the row it replaces, so re-importing an export is harmless.
 */
class Writer {
  constructor(
    private readonly trx: Transaction<Database>,
    private readonly now: string,
    private readonly created: KindCounts,
    private readonly updated: KindCounts,
  ) {}

  async writeForms(forms: Located<FormDraft>[]): Promise<void> {
    const existing = await this.existing(
      'forms',
      forms.map(({ draft }) => draft.id),
    )
    this.tally('forms', forms, existing)
    for (const batch of chunks(forms, BATCH_SIZE)) {
      const rows: Insertable<FormsTable>[] = batch.map(({ draft }) => ({
        id: draft.id,
        title: draft.title,
        description: draft.description,
        is_active: flag(draft.isActive),
        ...this.stamps(draft, existing.get(draft.id)),
      }))
      await this.trx
        .insertInto('forms')
        .values(rows)
        .onConflict((conflict) =>
          conflict.column('id').doUpdateSet((eb) => ({
            title: eb.ref('excluded.title'),
            description: eb.ref('excluded.description'),
            is_active: eb.ref('excluded.is_active'),
            created_at: eb.ref('excluded.created_at'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute()
    }
  }

  async writePages(pages: Located<PageDraft>[]): Promise<void> {
    const ids = pages.map(({ draft }) => draft.id)
    const existing = await this.existing('pages', ids)
    this.tally('pages', pages, existing)
    // Replaced rows go first so that paths can move between pages (a swap breaks no unique index).
    await this.remove('pages', ids, existing)
    for (const batch of chunks(pages, BATCH_SIZE)) {
      const rows: Insertable<PagesTable>[] = batch.map(({ draft }) => {
        const stamps = this.stamps(draft, existing.get(draft.id))
        return {
          id: draft.id,
          title: draft.title,
          slug: draft.slug,
          path: draft.path,
          page_type: draft.pageType,
          is_published: flag(draft.isPublished),
          // A published page always has a publication time; its creation is the best guess.
          published_at: draft.publishedAt ?? (draft.isPublished ? stamps.created_at : null),
          ...stamps,
        }
      })
      await this.trx
        .insertInto('pages')
        .values(rows)
        .onConflict((conflict) =>
          conflict.column('id').doUpdateSet((eb) => ({
            title: eb.ref('excluded.title'),
            slug: eb.ref('excluded.slug'),
            path: eb.ref('excluded.path'),
            page_type: eb.ref('excluded.page_type'),
            is_published: eb.ref('excluded.is_published'),
            published_at: eb.ref('excluded.published_at'),
            created_at: eb.ref('excluded.created_at'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute()
    }
  }

  async writeRedirects(redirects: Located<RedirectDraft>[]): Promise<void> {
    const ids = redirects.map(({ draft }) => draft.id)
    const existing = await this.existing('redirects', ids)
    this.tally('redirects', redirects, existing)
    await this.remove('redirects', ids, existing)
    for (const batch of chunks(redirects, BATCH_SIZE)) {
      const rows: Insertable<RedirectsTable>[] = batch.map(({ draft }) => ({
        id: draft.id,
        from_path: draft.fromPath,
        to_path: draft.toPath,
        type: draft.type,
        is_active: flag(draft.isActive),
        ...this.stamps(draft, existing.get(draft.id)),
      }))
      await this.trx
        .insertInto('redirects')
        .values(rows)
        .onConflict((conflict) =>
          conflict.column('id').doUpdateSet((eb) => ({
            from_path: eb.ref('excluded.from_path'),
            to_path: eb.ref('excluded.to_path'),
            type: eb.ref('excluded.type'),
            is_active: eb.ref('excluded.is_active'),
            created_at: eb.ref('excluded.created_at'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute()
    }
  }

  /**
   * Streams the submissions of `source` into the database and returns how many were written. Each
   * record is validated again: the file was read once already, and must not have changed since.
   */
  async writeSubmissions(source: RecordSource): Promise<number> {
    let written = 0
    let batch: SubmissionDraft[] = []
    const idsInBatch = new Set<string>()
    const flush = async () => {
      if (batch.length === 0) return
      await this.writeSubmissionBatch(batch)
      written += batch.length
      batch = []
      idsInBatch.clear()
    }
    for await (const entries of source.entries()) {
      for (const entry of entries) {
        if ('problem' in entry) throw fileChangedError()
        if (entry.kind !== 'submission') continue
        const reader = new FieldReader(entry.record, 'submission')
        const draft = readSubmission(reader)
        if (reader.problems.length > 0) throw fileChangedError()
        // One statement must not upsert the same row twice (PostgreSQL refuses it), and the later
        // record must win, so a repeated id starts a new batch.
        if (draft.id !== undefined) {
          if (idsInBatch.has(draft.id)) await flush()
          idsInBatch.add(draft.id)
        }
        batch.push(draft)
        if (batch.length >= BATCH_SIZE) await flush()
      }
    }
    await flush()
    return written
  }

  private async writeSubmissionBatch(drafts: SubmissionDraft[]): Promise<void> {
    const given = drafts.flatMap((draft) => (draft.id === undefined ? [] : [draft.id]))
    const existing = await this.existing('submissions', given)
    this.updated.submissions += existing.size
    this.created.submissions += drafts.length - existing.size
    const rows: Insertable<SubmissionsTable>[] = drafts.map((draft) => ({
      id: draft.id ?? newId('submission'),
      form_id: draft.formId,
      data: JSON.stringify(draft.data),
      ip_address: draft.ipAddress,
      user_agent: draft.userAgent,
      referrer: draft.referrer,
      submitted_by: draft.submittedBy,
      is_read: flag(draft.isRead),
      is_starred: flag(draft.isStarred),
      notes: draft.notes,
      ...this.stamps(draft, draft.id === undefined ? undefined : existing.get(draft.id)),
    }))
    await this.trx
      .insertInto('submissions')
      .values(rows)
      .onConflict((conflict) =>
        conflict.column('id').doUpdateSet((eb) => ({
          form_id: eb.ref('excluded.form_id'),
          data: eb.ref('excluded.data'),
          ip_address: eb.ref('excluded.ip_address'),
          user_agent: eb.ref('excluded.user_agent'),
          referrer: eb.ref('excluded.referrer'),
          submitted_by: eb.ref('excluded.submitted_by'),
          is_read: eb.ref('excluded.is_read'),
          is_starred: eb.ref('excluded.is_starred'),
          notes: eb.ref('excluded.notes'),
          created_at: eb.ref('excluded.created_at'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute()
  }

  /**
   * `createdAt` defaults to the replaced row's, else now; `updatedAt` to the record's `createdAt`
   * for a new row (an imported history keeps its dates), else now (the row changed now).
   */
  private stamps(draft: Timestamps, existingCreatedAt: string | undefined) {
    return {
      created_at: draft.createdAt ?? existingCreatedAt ?? this.now,
      updated_at:
        draft.updatedAt ?? (existingCreatedAt === undefined ? draft.createdAt : undefined) ?? this.now,
    }
  }

  /** Creation times of the rows among `ids` that already exist. */
  private async existing(
    table: 'forms' | 'submissions' | 'pages' | 'redirects',
    ids: readonly string[],
  ): Promise<Map<string, string>> {
    const found = new Map<string, string>()
    for (const chunk of chunks(ids, BATCH_SIZE)) {
      const rows = await this.trx
        .selectFrom(table)
        .select(['id', 'created_at'])
        .where('id', 'in', chunk)
        .execute()
      for (const row of rows) found.set(row.id, row.created_at)
    }
    return found
  }

  private async remove(
    table: 'pages' | 'redirects',
    ids: readonly string[],
    existing: ReadonlyMap<string, string>,
  ) {
    for (const chunk of chunks(
      ids.filter((id) => existing.has(id)),
      BATCH_SIZE,
    )) {
      await this.trx.deleteFrom(table).where('id', 'in', chunk).execute()
    }
  }

  /** Every record of an id after its first, and every record of an existing row, is an update. */
  private tally(
    kind: keyof KindCounts,
    records: readonly Located<{ id: string }>[],
    existing: ReadonlyMap<string, string>,
  ): void {
    for (const record of records) {
      const fresh = existing.has(record.draft.id) ? 0 : 1
      this.created[kind] += fresh
      this.updated[kind] += record.occurrences - fresh
    }
  }
}

/** The in-memory JSON document as records, checked for shape first. */
function jsonSource(document: unknown): RecordSource {
  const fileProblems: FieldProblem[] = []
  const arrays = new Map<Collection, unknown[]>()
  if (!isObject(document)) {
    fileProblems.push({
      message: `the file must hold a JSON object such as {"forms": [], "pages": []} (got ${describeJsonType(document)})`,
    })
  } else {
    for (const [key, value] of Object.entries(document)) {
      if (!(COLLECTIONS as readonly string[]).includes(key)) {
        const suggestion = closestField(key, new Set(COLLECTIONS))
        fileProblems.push({
          message: `unknown top-level key '${key}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}; expected ${COLLECTIONS.join(', ')}`,
        })
      } else if (!Array.isArray(value)) {
        fileProblems.push({ field: key, message: `must be an array (got ${describeJsonType(value)})` })
      } else {
        arrays.set(key as Collection, value)
      }
    }
  }
  return {
    fileProblems,
    async *entries() {
      // Orders keep the four arrays apart: problems list forms first, then submissions, and so on.
      for (const [rank, collection] of COLLECTIONS.entries()) {
        const items = arrays.get(collection) ?? []
        const kind = KIND_OF[collection]
        for (let start = 0; start < items.length; start += BATCH_SIZE) {
          const batch: SourceEntry[] = []
          for (let index = start; index < Math.min(start + BATCH_SIZE, items.length); index++) {
            const location: Location = { style: 'item', order: rank * 2 ** 32 + index + 1, collection, index }
            const record = items[index]
            batch.push(
              isObject(record)
                ? { kind, record, location }
                : {
                    problem: { message: `must be a JSON object (got ${describeJsonType(record)})` },
                    location,
                  },
            )
          }
          yield batch
        }
      }
    },
  }
}

async function readJsonDocument(path: string): Promise<RecordSource> {
  let text: string
  try {
    text = stripBom(await readFile(path, 'utf8'))
  } catch (error) {
    throw unreadableFileError(path, error)
  }
  if (text.trim() === '') return jsonSource({})
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (error) {
    const { reason, line, column } = locateSyntaxError(text, error)
    const where = line === undefined ? '' : ` at line ${line}, column ${column}`
    return {
      fileProblems: [{ message: `the file is not valid JSON${where}: ${reason}` }],
      entries: noEntries,
    }
  }
  return jsonSource(document)
}

async function* noEntries(): AsyncGenerator<SourceEntry[]> {}

/** Each non-blank line of an NDJSON file as a record, read as a stream each time it is iterated. */
function ndjsonSource(path: string): RecordSource {
  return {
    fileProblems: [],
    async *entries() {
      let line = 0
      for await (const lines of readLineBatches(path)) {
        const batch: SourceEntry[] = []
        for (const text of lines) {
          line++
          const entry = parseLine(line === 1 ? stripBom(text) : text, line)
          if (entry) batch.push(entry)
        }
        yield batch
      }
    },
  }
}

function parseLine(text: string, line: number): SourceEntry | undefined {
  if (text.trim() === '') return undefined
  const location: Location = { style: 'line', order: line, line }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const { reason, column } = locateSyntaxError(text, error)
    const where = column === undefined ? '' : ` at column ${column}`
    return { problem: { message: `not valid JSON${where}: ${reason}` }, location }
  }
  if (!isObject(value)) {
    return {
      problem: { message: `must be a JSON object with a "kind" (got ${describeJsonType(value)})` },
      location,
    }
  }
  const kind = value.kind
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) {
    const expected = KINDS.map((k) => `'${k}'`).join(', ')
    return {
      problem: {
        field: 'kind',
        message:
          kind === undefined
            ? `is required (one of ${expected})`
            : `must be one of ${expected} (got ${JSON.stringify(kind)})`,
      },
      location,
    }
  }
  return { kind: kind as ImportKind, record: value, location: { ...location, kind: kind as ImportKind } }
}

/** How many lines may wait for the consumer before the file stream is paused. */
const LINE_QUEUE_HIGH_WATER = 2000

/**
 * The lines of a file, in batches, with back-pressure. `readline`'s own async iterator keeps
 * reading while the consumer is busy writing (Node 20 buffers the whole file that way), so the
 * input is paused here whenever enough lines are waiting.
 */
async function* readLineBatches(path: string): AsyncGenerator<string[]> {
  const input = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 })
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
  let queue: string[] = []
  let finished = false
  let failure: unknown
  let wake: (() => void) | undefined
  const notify = () => {
    const resolve = wake
    wake = undefined
    resolve?.()
  }
  reader.on('line', (line) => {
    queue.push(line)
    if (queue.length >= LINE_QUEUE_HIGH_WATER) reader.pause()
    notify()
  })
  reader.on('close', () => {
    finished = true
    notify()
  })
  input.on('error', (error) => {
    failure = error
    finished = true
    notify()
  })
  try {
    for (;;) {
      if (queue.length > 0) {
        const lines = queue
        queue = []
        reader.resume()
        yield lines
      } else if (failure !== undefined) {
        throw unreadableFileError(path, failure)
      } else if (finished) {
        return
      } else {
        await new Promise<void>((resolve) => {
          wake = resolve
        })
      }
    }
  } finally {
    reader.close()
    input.destroy()
  }
}

/** Size and modification time, to notice a file that changes between the two passes. */
async function fileVersion(path: string): Promise<{ size: number; mtimeMs: number }> {
  try {
    const stats = await stat(path)
    if (!stats.isFile()) throw new ImportError([`'${path}' is not a file`])
    return { size: stats.size, mtimeMs: stats.mtimeMs }
  } catch (error) {
    if (error instanceof ImportError) throw error
    throw unreadableFileError(path, error)
  }
}

function unreadableFileError(path: string, error: unknown): ImportError {
  const code = (error as { code?: unknown } | null)?.code
  const reason = code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error)
  return new ImportError([`cannot read '${path}': ${reason}`])
}

const stripBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)

/**
 * `JSON.parse`'s complaint and where it happened. V8 gives an offset for some errors and only a
 * snippet for others, so the offset is found by scanning the text again (only ever after a failure).
 */
function locateSyntaxError(text: string, error: unknown): { reason: string; line?: number; column?: number } {
  const raw = error instanceof Error ? error.message : String(error)
  const reason = raw.replace(/ in JSON at position \d+.*$/s, '').replace(/, (\.\.\.)?".*$/s, '')
  const offset = jsonErrorOffset(text)
  if (offset < 0) return { reason }
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return { reason, line, column: offset - lineStart + 1 }
}

/** The offset of the first JSON syntax error in `text`, or -1 if there is none. */
function jsonErrorOffset(text: string): number {
  let i = 0
  const skipSpace = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r'))
      i++
  }
  const expect = (char: string): boolean => {
    skipSpace()
    if (text[i] !== char) return false
    i++
    return true
  }
  const string = (): boolean => {
    if (text[i] !== '"') return false
    i++
    while (i < text.length) {
      const code = text.charCodeAt(i)
      if (code === 0x22) {
        i++
        return true
      }
      if (code < 0x20) return false
      if (code === 0x5c) {
        const escaped = text[i + 1]
        if (escaped === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return false
          i += 6
        } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) {
          i += 2
        } else {
          i++
          return false
        }
      } else {
        i++
      }
    }
    return false
  }
  const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
  const value = (): boolean => {
    skipSpace()
    const char = text[i]
    if (char === '"') return string()
    if (char === '{' || char === '[') {
      const close = char === '{' ? '}' : ']'
      i++
      skipSpace()
      if (text[i] === close) {
        i++
        return true
      }
      for (;;) {
        if (close === '}') {
          skipSpace()
          if (!string() || !expect(':')) return false
        }
        if (!value()) return false
        skipSpace()
        if (text[i] === ',') i++
        else return expect(close)
      }
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) {
        i += literal.length
        return true
      }
    }
    number.lastIndex = i
    if (!number.test(text)) return false
    i = number.lastIndex
    return true
  }
  try {
    if (!value()) return i
  } catch {
    return -1 // nesting deep enough to overflow the stack: give the reason without a position
  }
  skipSpace()
  return i < text.length ? i : -1
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`
}
