import type { Kysely } from 'kysely'
import { createContentRepository } from '../db/repositories/content.js'
import type { Database } from '../db/tables.js'
import { NotFoundError } from '../errors.js'
import type { Form, ListOptions, Page, PageOf, Redirect, Submission } from '../schemas.js'

/** The read side of the four resources, as the API lists them. */
export function createContentService(db: Kysely<Database>) {
  const repository = createContentRepository(db)
  return {
    listForms: (options: ListOptions & { active?: boolean }): Promise<PageOf<Form>> =>
      repository.listForms(options),

    /** Submissions of one form, newest first; a form that does not exist is a `NotFoundError`. */
    async listSubmissionsForForm(formId: string, options: ListOptions): Promise<PageOf<Submission>> {
      if (!(await repository.formExists(formId))) throw new NotFoundError(`Form '${formId}' not found`)
      return repository.listSubmissionsForForm(formId, options)
    },

    listPages: (options: ListOptions & { published?: boolean }): Promise<PageOf<Page>> =>
      repository.listPages(options),

    listRedirects: (options: ListOptions & { active?: boolean }): Promise<PageOf<Redirect>> =>
      repository.listRedirects(options),
  }
}

export type ContentService = ReturnType<typeof createContentService>
