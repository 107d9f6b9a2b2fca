import type { Kysely } from 'kysely'
import { UniqueViolationError } from '../../db/errors.js'
import {
  deletePageRow,
  findPageById,
  findPageTitleByPath,
  insertPage,
  pagePosition,
  updatePageRow,
} from '../../db/repositories/pages.js'
import type { Database } from '../../db/tables.js'
import { NotFoundError } from '../../errors.js'
import { newId } from '../../ids.js'
import {
  type Page,
  type PageField,
  type PageInput,
  presentPage,
  readPageInput,
} from '../../resources/page.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { differences, FieldValidationError, flag, refuseWrongFields, type Saved } from './changes.js'

/** A page as given, checked by the page's reader, or a `FieldValidationError`. */
function checkPage(input: PageInput) {
  const { value, fields } = readPageInput(input)
  refuseWrongFields(fields)
  return value
}

/** The dashboard's changes to pages; each change and its audit entry are one transaction. */
export function createPageAdmin(db: Kysely<Database>) {
  /**
   * Runs a write of a page whose path is `path`. The unique index on `pages.path` decides, so two
   * pages saved at once cannot both take a path; the loser hears which page has it.
   */
  const writingPage = async <T>(path: string, write: () => Promise<T>): Promise<T> => {
    try {
      return await write()
    } catch (error) {
      if (!(error instanceof UniqueViolationError)) throw error
      const holder = await findPageTitleByPath(db, path)
      throw new FieldValidationError<PageField>({
        path: holder
          ? `Path ${path} is already the path of the page “${holder.title}”`
          : `Path ${path} was taken by another change meanwhile; please try again`,
      })
    }
  }

  return {
    getPage: async (id: string): Promise<Page> => {
      const row = await findPageById(db, id)
      if (!row) throw new NotFoundError(`Page '${id}' not found`)
      return presentPage(row)
    },

    /** Where a page sits in the list of pages (0 for the first): the list page to show it on. */
    pagePosition: (id: string) => pagePosition(db, id),

    /**
     * Creates a page; a `FieldValidationError` says what is wrong with which field, a path another
     * page has included. A published page gets `publishedAt` now.
     */
    createPage: (input: PageInput, actor: Actor = 'cli'): Promise<Page> => {
      const value = checkPage(input)
      const timestamp = now()
      const row = {
        id: newId('page'),
        title: value.title,
        slug: value.slug,
        path: value.path,
        page_type: value.pageType,
        is_published: flag(value.isPublished),
        published_at: value.isPublished ? timestamp : null,
        created_at: timestamp,
        updated_at: timestamp,
      }
      return writingPage(value.path, () =>
        db.transaction().execute(async (trx) => {
          await insertPage(trx, row)
          await recordAudit(trx, { actor, action: 'page.created', target: row.id, detail: value })
          return presentPage(row)
        }),
      )
    },

    /**
     * Replaces a page's fields, under the rules of creating one. `publishedAt` follows
     * `setPagePublished`: set on the first publication, kept when published again, cleared when
     * unpublished. A save that changes nothing writes nothing.
     */
    updatePage: (id: string, input: PageInput, actor: Actor = 'cli'): Promise<Saved<Page>> => {
      const value = checkPage(input)
      return writingPage(value.path, () =>
        db.transaction().execute(async (trx) => {
          const row = await findPageById(trx, id)
          if (!row) throw new NotFoundError(`Page '${id}' not found`)
          const current = presentPage(row)
          const { changed, after, before } = differences(
            {
              title: current.title,
              slug: current.slug,
              path: current.path,
              pageType: current.pageType,
              isPublished: current.isPublished,
            },
            value,
          )
          if (changed.length === 0) return { item: current, changed }
          const timestamp = now()
          const change = {
            title: value.title,
            slug: value.slug,
            path: value.path,
            page_type: value.pageType,
            is_published: flag(value.isPublished),
            published_at: value.isPublished ? (row.published_at ?? timestamp) : null,
            updated_at: timestamp,
          }
          await updatePageRow(trx, id, change)
          await recordAudit(trx, {
            actor,
            action: 'page.updated',
            target: id,
            detail: { ...after, previous: before },
          })
          return { item: presentPage({ ...row, ...change }), changed }
        }),
      )
    },

    /** Deletes a page; returns it as it was. */
    deletePage: (id: string, actor: Actor = 'cli'): Promise<Page> =>
      db.transaction().execute(async (trx) => {
        const row = await findPageById(trx, id)
        if (!row) throw new NotFoundError(`Page '${id}' not found`)
        await deletePageRow(trx, id)
        await recordAudit(trx, {
          actor,
          action: 'page.deleted',
          target: id,
          detail: { title: row.title, path: row.path },
        })
        return presentPage(row)
      }),

    /**
     * Publishes or unpublishes a page. A published page always has `publishedAt` (the first
     * publication is kept when publishing again); an unpublished page has none.
     */
    setPagePublished: (id: string, published: boolean, actor: Actor = 'cli'): Promise<Page> =>
      db.transaction().execute(async (trx) => {
        const row = await findPageById(trx, id)
        if (!row) throw new NotFoundError(`Page '${id}' not found`)
        const timestamp = now()
        const change = {
          is_published: flag(published),
          published_at: published ? (row.published_at ?? timestamp) : null,
          updated_at: timestamp,
        }
        await updatePageRow(trx, id, change)
        await recordAudit(trx, {
          actor,
          action: 'page.updated',
          target: id,
          detail: { isPublished: published },
        })
        return presentPage({ ...row, ...change })
      }),
  }
}
