import type { DatabaseHandle } from '../db/handle.js'
import { countSpamOfForm } from '../db/repositories/spam-submissions.js'
import { NotFoundError } from '../errors.js'
import type { FieldDefinition } from '../resources/form.js'
import type { Actor } from './audit.js'
import { createPostingForms, type IntakeForm } from './intake/forms.js'
import { createPostWriter } from './intake/posts.js'
import { createRetention } from './intake/retention.js'
import { updateIntakeSettings } from './intake/settings.js'

export { type IntakeForm, type PostingForm, takesPosts } from './intake/forms.js'
export { FormReadStale, type IntakePost } from './intake/posts.js'
export type { RetentionRun } from './intake/retention.js'

/**
 * Form intake: the posts a site's visitors send to `POST /f/{id}`, a form's intake settings, and
 * retention. The rules are in `intake/` (the forms posts go to, storing posts, settings,
 * retention); the SQL in `db/repositories/intake-posts.ts`, `forms.ts`, `submissions.ts` and
 * `spam-submissions.ts`.
 */
export function createIntakeService(database: DatabaseHandle, options: { clock?: () => number } = {}) {
  const db = database.db
  const clock = options.clock ?? Date.now
  const forms = createPostingForms(database)
  const posts = createPostWriter(database, forms, clock)
  const retention = createRetention(db, clock)

  return {
    /** The form with its intake settings, or null when there is no such form. */
    form: forms.form,

    /** The form a post goes to, with who listens to its new submissions, for `accept`. */
    formForPost: forms.formForPost,

    /** A form as `GET /api/v1/forms/{id}` shows it; a form that does not exist is a `NotFoundError`. */
    async describe(formId: string): Promise<IntakeForm & { fields: FieldDefinition[] }> {
      const found = await forms.form(formId)
      if (found === null) throw new NotFoundError(`Form '${formId}' not found`)
      return { ...found, fields: found.settings.fields }
    },

    /** Replaces a form's intake settings (see `intake/settings.ts`); audited as `form.intake_changed`. */
    updateSettings: (formId: string, input: unknown, actor: Actor = 'cli') =>
      updateIntakeSettings(db, formId, input, actor, new Date(clock())),

    /** Stores one accepted post and returns its id once it is committed (see `intake/posts.ts`). */
    accept: posts.accept,

    /** Resolves once every post accepted so far is committed (for an orderly shutdown). */
    drained: posts.drained,

    /** How many caught posts a form has in its spam, for the dashboard and for checks. */
    spamCount: (formId: string): Promise<number> => countSpamOfForm(db, formId),

    /** Deletes what forms keep no longer, now (see `intake/retention.ts`). */
    purgeExpired: retention.purgeExpired,
    /** The same when this instance takes the retention lease; null when another purged lately. */
    purgeIfDue: retention.purgeIfDue,
    /** Asks for the lease now and every few minutes until `stop()`, telling `onError` of failures. */
    start: retention.start,
    stop: retention.stop,
  }
}

export type IntakeService = ReturnType<typeof createIntakeService>
