import type { DatabaseHandle } from '../db/database.js'
import { createContentRepository, type JsonPage } from '../db/repositories/content.js'
import { NotFoundError } from '../errors.js'
import type { Form, ListOptions, Page, PageOf, Redirect, Submission } from '../schemas.js'

/**
 * The read side of the four resources, as the API lists them. `version` is the content version the
 * caller read in the same round trip as its key check; with it, totals and deep-page positions are
 * reused while the content is unchanged.
 */
export function createContentService(database: DatabaseHandle) {
  const repository = createContentRepository(database)
  return {
    listForms: (options: ListOptions & { active?: boolean }, version?: number): Promise<PageOf<Form>> =>
      repository.listForms(options, version),

    /** Submissions of one form, newest first; a form that does not exist is a `NotFoundError`. */
    async listSubmissionsForForm(
      formId: string,
      options: ListOptions,
      version?: number,
    ): Promise<PageOf<Submission>> {
      if (!(await repository.formExists(formId, version)))
        throw new NotFoundError(`Form '${formId}' not found`)
      return repository.listSubmissionsForForm(formId, options, version)
    },

    /**
     * The same page as `listSubmissionsForForm` with its items as JSON text, as the API writes
     * them; a form that does not exist is a `NotFoundError`.
     */
    async listSubmissionsJsonForForm(
      formId: string,
      options: ListOptions,
      version?: number,
    ): Promise<JsonPage> {
      if (!(await repository.formExists(formId, version)))
        throw new NotFoundError(`Form '${formId}' not found`)
      return repository.listSubmissionsJsonForForm(formId, options, version)
    },

    listPages: (options: ListOptions & { published?: boolean }, version?: number): Promise<PageOf<Page>> =>
      repository.listPages(options, version),

    listRedirects: (
      options: ListOptions & { active?: boolean },
      version?: number,
    ): Promise<PageOf<Redirect>> => repository.listRedirects(options, version),
  }
}

export type ContentService = ReturnType<typeof createContentService>
