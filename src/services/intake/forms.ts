import { LRUCache } from 'lru-cache'
import type { DatabaseHandle } from '../../db/handle.js'
import { prepareFormForPost } from '../../db/repositories/intake-posts.js'
import { type IntakeSettings, parseStoredIntake } from '../../resources/form.js'
import { type FormListeners, formListenersOf } from '../notifications/outbox.js'

/** How many forms each instance remembers for posts (see `formForPost`). */
const REMEMBERED_FORMS = 1_000

/** A form as the intake needs it: whether it takes posts, and by which rules. */
export interface IntakeForm {
  id: string
  title: string
  description: string | null
  isActive: boolean
  settings: IntakeSettings
}

/** Whether a form takes posts now: it is active and its intake is enabled. */
export const takesPosts = (form: IntakeForm) => form.isActive && form.settings.enabled

/** A form as a post reads it: the form, who listens to its new submissions, and when it was read. */
export interface PostingForm {
  form: IntakeForm
  listeners: FormListeners
  /** The forms version (migration 011) read with it: a plain post is stored only while it holds. */
  readAt: number
  /**
   * Read from this instance's memory, not from the database: it may be out of date, so whatever it
   * refuses is decided again on a fresh read (the face does that).
   */
  remembered: boolean
}

/**
 * The forms posts go to: each read with who listens to its new submissions and the forms version,
 * in one prepared statement, and the forms that take posts and that nobody listens to remembered as
 * last read. A post to one of those is decided without a read (one statement per post instead of
 * two, on PostgreSQL a round trip fewer), and its insert checks that the form has not changed since
 * (the guarded insert, in `db/repositories/intake-posts.ts`).
 */
export function createPostingForms(database: Pick<DatabaseHandle, 'db' | 'prepare'>) {
  const readForm = prepareFormForPost(database)
  const remembered = new LRUCache<string, PostingForm>({ max: REMEMBERED_FORMS })

  async function readFresh(formId: string): Promise<PostingForm | null> {
    const [row] = await readForm(formId)
    if (row === undefined) {
      remembered.delete(formId)
      return null
    }
    const read: PostingForm = {
      form: {
        id: row.id,
        title: row.title,
        description: row.description,
        isActive: row.is_active === 1,
        settings: parseStoredIntake(row.intake),
      },
      listeners: formListenersOf(row),
      readAt: Number(row.forms_version ?? 0),
      remembered: false,
    }
    if (takesPosts(read.form) && !read.listeners.allForms && !read.listeners.thisForm)
      remembered.set(formId, { ...read, remembered: true })
    else remembered.delete(formId)
    return read
  }

  return {
    /**
     * The form a post goes to: from memory when this instance remembers it (see
     * `PostingForm.remembered`), else read from the database; `fresh` always reads. Null when there
     * is no such form.
     */
    async formForPost(formId: string, { fresh = false } = {}): Promise<PostingForm | null> {
      if (!fresh) {
        const kept = remembered.get(formId)
        if (kept !== undefined) return kept
      }
      return readFresh(formId)
    },

    /** The form with its intake settings, read now; null when there is no such form. */
    async form(formId: string): Promise<IntakeForm | null> {
      return (await readFresh(formId))?.form ?? null
    },

    /** Forgets what this instance remembers of `formId`: a post found it changed. */
    forget(formId: string): void {
      remembered.delete(formId)
    },
  }
}

export type PostingForms = ReturnType<typeof createPostingForms>
