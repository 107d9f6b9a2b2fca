import type { Kysely } from 'kysely'
import { allFormIds } from '../../db/repositories/imports.js'
import type { Database } from '../../db/tables.js'
import { readForm } from '../../resources/form.js'
import { readPage } from '../../resources/page.js'
import { readRedirect } from '../../resources/redirect.js'
import { readSubmission } from '../../resources/submission.js'
import { checkPagePaths, checkRedirects, type Findings, FormReferences } from './checks.js'
import { ImportError, MAX_LISTED_PROBLEMS, MessageList } from './errors.js'
import type { ImportKind } from './kinds.js'
import { type KindCounts, zeroCounts } from './kinds.js'
import { describeLocation, type FieldProblem, formatProblem, type Location } from './locations.js'
import { RecordIndex } from './record-index.js'
import type { RecordSource, SourceEntry } from './sources.js'

const MAX_LISTED_WARNINGS = 100

/**
 * Everything the validating pass learns: counts, problems, warnings, and of the forms, pages and
 * redirects only what the checks across records need (ids, the order of each id's last record,
 * paths), compactly; the writing pass reads the records again. Submissions are only checked and
 * counted here.
 */
export class ImportPlan implements Findings {
  readonly problems = new MessageList(MAX_LISTED_PROBLEMS)
  readonly warnings = new MessageList(MAX_LISTED_WARNINGS)
  readonly counts: KindCounts = zeroCounts()
  readonly forms = new RecordIndex('form')
  readonly pages = new RecordIndex('page', ['path'])
  readonly redirects = new RecordIndex('redirect', ['fromPath', 'toPath'])
  private readonly formReferences: FormReferences

  constructor(
    databaseFormIds: ReadonlySet<string>,
    private readonly source: RecordSource,
  ) {
    this.formReferences = new FormReferences(databaseFormIds, this.forms)
  }

  locate(order: number, kind: ImportKind): Location {
    return this.source.locate(order, kind)
  }

  report(location: Location, problem: FieldProblem): void {
    this.problems.add(location.order, formatProblem(location, problem))
  }

  warn(location: Location, problem: FieldProblem): void {
    this.warnings.add(location.order, formatProblem(location, problem))
  }

  accept(entry: SourceEntry): void {
    if ('problem' in entry) {
      this.report(entry.location, entry.problem)
      return
    }
    const { kind, record, location } = entry
    switch (kind) {
      case 'form':
        this.counts.forms++
        this.keep(this.forms, readForm(record), location, () => ({}))
        break
      case 'page':
        this.counts.pages++
        this.keep(this.pages, readPage(record), location, ({ path }) => ({ path }))
        break
      case 'redirect':
        this.counts.redirects++
        this.keep(this.redirects, readRedirect(record), location, ({ fromPath, toPath }) => ({
          fromPath,
          toPath,
        }))
        break
      case 'submission': {
        this.counts.submissions++
        const { draft, problems } = readSubmission(record)
        for (const problem of problems) this.report(location, problem)
        this.formReferences.note(draft.formId)
        break
      }
    }
  }

  /** The checks that need every record: form references, unique page paths, redirect rules. */
  async finish(db: Kysely<Database>, source: RecordSource): Promise<void> {
    await this.formReferences.check(source, this)
    await checkPagePaths(db, this.pages, this)
    await checkRedirects(db, this.redirects, this)
    this.pages.forgetFields()
    this.redirects.forgetFields()
  }

  /**
   * Reports a record's problems and keeps what the checks across records need of it. A record with
   * problems still takes part in those checks, so that one run lists every problem of the file; only
   * what could not be read stays out: the whole record when its id could not be read, else each
   * field with a problem of its own. So a form with problems is still in the file for the
   * submissions that name it: its own problems are what there is to fix, not theirs.
   */
  private keep<T extends { id?: string }, F extends string>(
    kept: RecordIndex<F>,
    { draft, problems }: { draft: T; problems: FieldProblem[] },
    location: Location,
    fields: (draft: T) => Record<F, string>,
  ): void {
    for (const problem of problems) this.report(location, problem)
    if (problems.some((problem) => problem.field === 'id')) return
    const values: Record<F, string | undefined> = fields(draft)
    for (const { field } of problems)
      if (field !== undefined && Object.hasOwn(values, field)) values[field as F] = undefined
    const earlier = kept.keep(RecordIndex.key(draft.id, location.order), location.order, values)
    if (earlier !== undefined) {
      this.warn(location, {
        message: `id '${draft.id}' also appears at ${describeLocation(this.locate(earlier, kept.kind))}; this later record wins`,
      })
    }
  }
}

/**
 * The validating pass: reads every record of `source`, then runs the checks that need them all
 * (form references, unique page paths, redirect rules). Throws {@link ImportError} listing every
 * problem (and the warnings found on the way), or returns what to write.
 */
export async function planImport(db: Kysely<Database>, source: RecordSource): Promise<ImportPlan> {
  if (source.fileProblems.length > 0) {
    const location: Location = { style: 'file', order: 0 }
    throw new ImportError(source.fileProblems.map((problem) => formatProblem(location, problem)))
  }
  const plan = new ImportPlan(await allFormIds(db), source)
  for await (const batch of source.entries()) for (const entry of batch) plan.accept(entry)
  await plan.finish(db, source)
  if (plan.problems.total > 0) {
    throw new ImportError(plan.problems.texts(), plan.problems.total, plan.warnings.listed('warning'))
  }
  return plan
}
