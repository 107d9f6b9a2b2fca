import type { Kysely } from 'kysely'
import { guarded } from '../../db/repositories/content.js'
import type { Database } from '../../db/tables.js'
import { checkPagePaths, checkRedirects, type Findings, FormReferences } from './checks.js'
import { ImportError, MAX_LISTED_PROBLEMS, MessageList } from './errors.js'
import { type KindCounts, zeroCounts } from './kinds.js'
import {
  describeLocation,
  type FieldProblem,
  formatProblem,
  type Located,
  type Location,
} from './locations.js'
import {
  type FormDraft,
  type PageDraft,
  type RedirectDraft,
  readForm,
  readPage,
  readRedirect,
  readSubmission,
} from './records.js'
import type { RecordSource, SourceEntry } from './sources.js'

const MAX_LISTED_WARNINGS = 100

/**
 * Everything the validating pass learns: the forms, pages and redirects to write (held in memory;
 * they are few), counts, problems and warnings. Submissions are only checked and counted here.
 */
export class ImportPlan implements Findings {
  readonly problems = new MessageList(MAX_LISTED_PROBLEMS)
  readonly warnings = new MessageList(MAX_LISTED_WARNINGS)
  readonly counts: KindCounts = zeroCounts()
  readonly forms = new Map<string, Located<FormDraft>>()
  readonly pages = new Map<string, Located<PageDraft>>()
  readonly redirects = new Map<string, Located<RedirectDraft>>()
  private readonly formReferences: FormReferences

  constructor(databaseFormIds: ReadonlySet<string>) {
    this.formReferences = new FormReferences(databaseFormIds, this.forms)
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
        this.keep(this.forms, readForm(record), location)
        break
      case 'page':
        this.counts.pages++
        this.keep(this.pages, readPage(record), location)
        break
      case 'redirect':
        this.counts.redirects++
        this.keep(this.redirects, readRedirect(record), location)
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
  }

  private keep<T extends { id: string }>(
    kept: Map<string, Located<T>>,
    { draft, problems }: { draft: T; problems: FieldProblem[] },
    location: Location,
  ): void {
    for (const problem of problems) this.report(location, problem)
    const earlier = kept.get(draft.id)
    if (earlier) {
      this.warn(location, {
        message: `id '${draft.id}' also appears at ${describeLocation(earlier.location)}; this later record wins`,
      })
    }
    if (problems.length > 0) return
    kept.set(draft.id, { draft, location, occurrences: (earlier?.occurrences ?? 0) + 1 })
  }
}

/**
 * The validating pass: reads every record of `source`, then runs the checks that need them all
 * (form references, unique page paths, redirect rules). Throws {@link ImportError} listing every
 * problem, or returns what to write.
 */
export async function planImport(db: Kysely<Database>, source: RecordSource): Promise<ImportPlan> {
  if (source.fileProblems.length > 0) {
    const location: Location = { style: 'file', order: 0 }
    throw new ImportError(source.fileProblems.map((problem) => formatProblem(location, problem)))
  }
  const formRows = await guarded(() => db.selectFrom('forms').select('id').execute())
  const plan = new ImportPlan(new Set(formRows.map((row) => row.id)))
  for await (const batch of source.entries()) for (const entry of batch) plan.accept(entry)
  await plan.finish(db, source)
  if (plan.problems.total > 0) throw new ImportError(plan.problems.texts(), plan.problems.total)
  return plan
}
