import { LRUCache } from 'lru-cache'
import type { FormState } from '../db/content-version.js'
import type { InsertJournal, JournaledRow } from '../db/insert-journal.js'

/** Page 1 of a form's submissions as this instance holds it. */
interface FirstPage {
  /** The form's version it shows (at least: it was built after that version was read). */
  version: number
  rows: readonly JournaledRow[]
}

/** Newest first, ties by id, as the list is ordered (both are ASCII, compared as the database compares them). */
const newestFirst = (a: JournaledRow, b: JournaledRow): number =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1

/** How many pages are held: one per form and page size. */
const KEPT_PAGES = 512

/**
 * Page 1 of each form's submissions, carried over the posts this instance writes, so that a form
 * taking posts does not have its first page read again after each one.
 *
 * Why it is never stale: a page held at version v is carried to a newer version v' only along a
 * chain of steps v → … → v' each made by one of this instance's inserts (`InsertJournal`, exact:
 * each insert read the version it moved under the lock of the form's counts row). Every write to a
 * form's submissions, by anyone, moves its version in its own transaction (migration 011), so a
 * chain made only of this instance's inserts leaves no room for another write: the page at v' is the
 * page at v with their rows merged in. Any other write breaks the chain, and the page is read again.
 */
export function createFirstPages(
  journal: InsertJournal,
  readRows: (formId: string, limit: number) => Promise<JournaledRow[]>,
) {
  const pages = new LRUCache<string, FirstPage>({ max: KEPT_PAGES })
  const statistics = { read: 0, followed: 0 }

  /** `page` carried to `version` along this instance's inserts, or undefined when the chain breaks. */
  function follow(formId: string, page: FirstPage, version: number, size: number): FirstPage | undefined {
    const rows = [...page.rows]
    const seen = new Set(rows.map((row) => row.id))
    let at = page.version
    while (at < version) {
      const step = journal.stepFrom(formId, at)
      if (step === undefined) return undefined
      // A page built after the insert committed already holds its rows.
      for (const row of step.rows) if (!seen.has(row.id)) rows.push(row)
      at = step.to
    }
    if (at !== version) return undefined
    rows.sort(newestFirst)
    return { version, rows: rows.slice(0, size) }
  }

  return {
    /**
     * The items of page 1 of `formId`'s submissions, `size` per page, as JSON text joined by
     * commas, at `state` (read after the request arrived).
     */
    async json(formId: string, size: number, state: FormState): Promise<string> {
      if (state.total === 0) return ''
      const key = `${formId}\n${size}`
      const held = pages.get(key)
      if (held !== undefined) {
        // A page built after a read of this version or a newer one shows at least this version.
        if (held.version >= state.version) return joined(held.rows)
        const followed = follow(formId, held, state.version, size)
        if (followed !== undefined) {
          statistics.followed++
          pages.set(key, followed)
          return joined(followed.rows)
        }
      }
      statistics.read++
      const rows = await readRows(formId, size)
      const current = pages.get(key)
      if (current === undefined || current.version < state.version)
        pages.set(key, { version: state.version, rows })
      return joined(rows)
    },

    /** How many first pages were read from the database, and how many followed posts, since start. */
    statistics: (): Readonly<typeof statistics> => ({ ...statistics }),
  }
}

const joined = (rows: readonly JournaledRow[]): string => rows.map((row) => row.json).join(',')

export type FirstPages = ReturnType<typeof createFirstPages>
