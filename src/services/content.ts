import type { FormState } from '../db/content-version.js'
import type { DatabaseHandle } from '../db/database.js'
import { createContentRepository, type JsonPage } from '../db/repositories/content.js'
import { NotFoundError } from '../errors.js'
import { presentForm } from '../resources/form.js'
import { presentPage } from '../resources/page.js'
import { presentRedirect } from '../resources/redirect.js'
import type { Form, ListOptions, Page, PageOf, Redirect, Submission, SubmissionFilters } from '../schemas.js'
import { sharedFreshLookups } from './coalesced-lookups.js'

/** A page of rows as the API lists them, each made an item by its resource's presenter. */
const presented = <Row, Item>(page: PageOf<Row>, present: (row: Row) => Item): PageOf<Item> => ({
  items: page.items.map(present),
  total: page.total,
})

/**
 * The read side of the four resources, as the API lists them. `version` is the version of the
 * list's kind the caller read in the same round trip as its key check; with it, totals and
 * deep-page positions are reused while that kind is unchanged. A form's submissions are read with
 * the form's own state (`formState`).
 */
export function createContentService(database: DatabaseHandle) {
  const repository = createContentRepository(database)
  // Requests for one form in the same turn of the event loop share the next read of its state,
  // never one that started before they arrived (see `sharedFreshLookups`).
  const freshFormState = sharedFreshLookups((id: string) => repository.formState(id))

  /** The state of form `formId` read after this call; a form that does not exist is a `NotFoundError`. */
  const formState = async (formId: string): Promise<FormState> => {
    const state = await freshFormState(formId)
    if (!state.exists) throw new NotFoundError(`Form '${formId}' not found`)
    return state
  }

  return {
    listForms: async (options: ListOptions & { active?: boolean }, version?: number): Promise<PageOf<Form>> =>
      presented(await repository.listForms(options, version), presentForm),

    formState,

    /** Submissions of one form, newest first; a form that does not exist is a `NotFoundError`. */
    async listSubmissionsForForm(
      formId: string,
      options: ListOptions,
      state?: FormState,
      filters?: SubmissionFilters,
    ): Promise<PageOf<Submission>> {
      return repository.listSubmissionsForForm(formId, options, state ?? (await formState(formId)), filters)
    },

    /**
     * The same page as `listSubmissionsForForm` with its items as JSON text, as the API writes
     * them; a form that does not exist is a `NotFoundError`.
     */
    async listSubmissionsJsonForForm(
      formId: string,
      options: ListOptions,
      state?: FormState,
      filters?: SubmissionFilters,
    ): Promise<JsonPage> {
      return repository.listSubmissionsJsonForForm(
        formId,
        options,
        state ?? (await formState(formId)),
        filters,
      )
    },

    listPages: async (
      options: ListOptions & { published?: boolean },
      version?: number,
    ): Promise<PageOf<Page>> => presented(await repository.listPages(options, version), presentPage),

    listRedirects: async (
      options: ListOptions & { active?: boolean },
      version?: number,
    ): Promise<PageOf<Redirect>> =>
      presented(await repository.listRedirects(options, version), presentRedirect),
  }
}

export type ContentService = ReturnType<typeof createContentService>
