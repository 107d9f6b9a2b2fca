import type { Kysely } from 'kysely'
import { guarded } from '../../db/repositories/content.js'
import type { Database } from '../../db/tables.js'
import { findRedirectChains, findRedirectLoops, type RedirectEdge } from '../redirect-rules.js'
import { BATCH_SIZE, chunks } from './batches.js'
import { byOrder, describeLocation, type FieldProblem, type Located, type Location } from './locations.js'
import type { PageDraft, RedirectDraft } from './records.js'
import type { RecordSource } from './sources.js'

/** Where the checks that need every record put what they find. */
export interface Findings {
  report(location: Location, problem: FieldProblem): void
  warn(location: Location, problem: FieldProblem): void
}

/** Distinct form ids referenced before their form was seen; beyond this a second pass checks them. */
const MAX_PENDING_FORM_IDS = 100_000

/**
 * Checks that every submission names a form of the database or of the file. Submissions are not
 * kept, so only the ids they name before their form appears are noted while streaming; when any
 * remains unknown at the end, a second read finds the lines that name it.
 */
export class FormReferences {
  private readonly pending = new Set<string>()
  private overflow = false

  constructor(
    private readonly databaseFormIds: ReadonlySet<string>,
    private readonly importedForms: ReadonlyMap<string, unknown>,
  ) {}

  /** Notes the form a valid-looking submission names. */
  note(formId: string): void {
    if (formId === '' || this.exists(formId) || this.pending.has(formId)) return
    if (this.pending.size < MAX_PENDING_FORM_IDS) this.pending.add(formId)
    else this.overflow = true
  }

  /** Reports every submission whose form exists neither in the database nor among the kept forms. */
  async check(source: RecordSource, findings: Findings): Promise<void> {
    const unresolved = [...this.pending].some((id) => !this.importedForms.has(id))
    if (!unresolved && !this.overflow) return
    for await (const batch of source.entries()) {
      for (const entry of batch) {
        if ('problem' in entry || entry.kind !== 'submission') continue
        const formId = entry.record.formId
        if (typeof formId === 'string' && formId.trim() !== '' && !this.exists(formId)) {
          findings.report(entry.location, { field: 'formId', message: `'${formId}' does not exist` })
        }
      }
    }
  }

  private exists(id: string): boolean {
    return this.databaseFormIds.has(id) || this.importedForms.has(id)
  }
}

/** Refuses a page whose path another page of the file, or one in the database it does not replace, has. */
export async function checkPagePaths(
  db: Kysely<Database>,
  pages: ReadonlyMap<string, Located<PageDraft>>,
  findings: Findings,
): Promise<void> {
  const byPath = new Map<string, Located<PageDraft>>()
  for (const page of [...pages.values()].sort(byOrder)) {
    const holder = byPath.get(page.draft.path)
    if (holder) {
      findings.report(page.location, {
        field: 'path',
        message: `'${page.draft.path}' is already the path of the page at ${describeLocation(holder.location)}`,
      })
    } else {
      byPath.set(page.draft.path, page)
    }
  }
  for (const paths of chunks([...byPath.keys()], BATCH_SIZE)) {
    const rows = await guarded(() =>
      db.selectFrom('pages').select(['id', 'path']).where('path', 'in', paths).execute(),
    )
    for (const row of rows) {
      // A row this import replaces gives up its path; the file's own duplicates were found above.
      if (pages.has(row.id)) continue
      const page = byPath.get(row.path)
      if (page) {
        findings.report(page.location, {
          field: 'path',
          message: `'${row.path}' is already the path of page '${row.id}' in the database`,
        })
      }
    }
  }
}

/**
 * The redirect rules of SPEC §2 over the file's redirects and the stored ones they do not replace:
 * a `fromPath` is redirected once, loops are refused, chains are warned about.
 */
export async function checkRedirects(
  db: Kysely<Database>,
  redirects: ReadonlyMap<string, Located<RedirectDraft>>,
  findings: Findings,
): Promise<void> {
  if (redirects.size === 0) return
  interface Node extends RedirectEdge {
    id: string
    location?: Location
  }
  // Inactive redirects count too: switching one on later must not be able to close a loop.
  const rows = await guarded(() =>
    db.selectFrom('redirects').select(['id', 'from_path', 'to_path']).execute(),
  )
  const stored: Node[] = rows
    .filter((row) => !redirects.has(row.id))
    .map((row) => ({ id: row.id, fromPath: row.from_path, toPath: row.to_path }))
  const imported: Node[] = [...redirects.values()].sort(byOrder).map(({ draft, location }) => ({
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
      findings.report(node.location, {
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
    findings.report(culprit.location, {
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
    findings.warn(culprit.location, {
      message: `redirect chain ${route}${origin}; consider pointing '${chain.fromPath}' straight at '${chain.finalPath}'`,
    })
  }
}

/** The same loop, starting (and ending) at `start`. */
function rotateLoop(loop: readonly string[], start: string): string[] {
  const cycle = loop.slice(0, -1)
  const at = Math.max(cycle.indexOf(start), 0)
  const rotated = [...cycle.slice(at), ...cycle.slice(0, at)]
  return [...rotated, rotated[0]]
}
