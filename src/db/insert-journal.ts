import { LRUCache } from 'lru-cache'

/** A row this instance inserted into a form's submissions: its place in the list's order and its JSON. */
export interface JournaledRow {
  id: string
  createdAt: string
  /** The item as the API writes it (the row's `json` column, byte for byte). */
  json: string
}

/** One step of a form's version made by one of this instance's inserts, and the rows it added. */
export interface JournaledStep {
  from: number
  to: number
  rows: readonly JournaledRow[]
}

/** How many steps are kept per form: enough for the seconds between two reads of a busy form. */
const KEPT_PER_FORM = 256
/** How many forms' steps are kept (the forms posted to most recently). */
const KEPT_FORMS = 1_000

/**
 * The steps of forms' versions that this instance's own inserts made, each read by the insert itself
 * under the lock of the form's counts row (`services/intake.ts`), so it is exact: an insert that
 * moved a form from version v to v + 1 added these rows and nothing else. A chain of such steps from
 * one version to another leaves no room for any other write (every write moves the version), which
 * lets page 1 of a form follow this instance's posts without a read (`services/first-pages.ts`).
 * Forgetting a step is always safe: the chain breaks, and the page is read again.
 */
export function createInsertJournal() {
  const forms = new LRUCache<string, Map<number, JournaledStep>>({ max: KEPT_FORMS })
  return {
    /** Notes that an insert of this instance moved `formId`'s version from `from` to `to`, adding `rows`. */
    moved(formId: string, from: number, to: number, rows: readonly JournaledRow[]): void {
      let steps = forms.get(formId)
      if (steps === undefined) {
        steps = new Map()
        forms.set(formId, steps)
      }
      steps.set(from, { from, to, rows })
      // A Map iterates in insertion order: the first key is the oldest step.
      if (steps.size > KEPT_PER_FORM) steps.delete(steps.keys().next().value as number)
    },

    /** The step of `formId`'s version from `from` that an insert of this instance made, if known. */
    stepFrom(formId: string, from: number): JournaledStep | undefined {
      return forms.get(formId)?.get(from)
    },
  }
}

export type InsertJournal = ReturnType<typeof createInsertJournal>
