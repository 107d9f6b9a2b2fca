import type { Kysely } from 'kysely'
import type { Database } from '../db/tables.js'
import { createFormAdmin } from './content-admin/forms.js'
import { createPageAdmin } from './content-admin/pages.js'
import { createSubmissionAdmin } from './content-admin/submissions.js'

export { FORM_FIELD_LABELS, type FormField, type FormInput } from '../resources/form.js'
export { PAGE_FIELD_LABELS, type PageField, type PageInput } from '../resources/page.js'
export { MAX_NOTES_LENGTH } from '../resources/submission.js'
export { FieldValidationError, type Saved } from './content-admin/changes.js'
export { type AdminForm, toAdminForm } from './content-admin/forms.js'

/**
 * The dashboard's changes to forms, pages and submissions, and the reads that only the dashboard
 * needs (redirects have `redirects/`), one file per resource under `content-admin/`. Forms and
 * pages are checked by their resource's reader (`resources/`), the one the importer uses, so a
 * title the dashboard takes is one an import takes, and the other way round. Every change and its
 * audit entry are one transaction: neither is kept without the other. Cached API responses need no
 * call from here: the database's own triggers move the content version on every write, whoever
 * makes it (see migration 003).
 */
export function createContentAdminService(db: Kysely<Database>) {
  return {
    ...createFormAdmin(db),
    ...createPageAdmin(db),
    ...createSubmissionAdmin(db),
  }
}

export type ContentAdminService = ReturnType<typeof createContentAdminService>
