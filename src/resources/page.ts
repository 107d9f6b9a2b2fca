import { type Static, Type } from '@sinclair/typebox'
import type { Selectable } from 'kysely'
import type { PagesTable } from '../db/tables.js'
import { FIELD_LIMITS } from '../limits.js'
import { Id, SitePath, Timestamp } from './api-fields.js'
import { type FieldProblem, importFields, kindField, problemsByField, recordReader } from './record-reader.js'

/**
 * A page of the site: its API schema, the one reader of a page as given (an import record, the
 * dashboard's editor) and its presenter. The path's uniqueness needs the database: writes check it.
 */

export const PageSchema = Type.Object(
  {
    id: Id('page'),
    title: Type.String({ examples: ['About us'] }),
    slug: Type.String({ examples: ['about-us'] }),
    path: SitePath("the page's path on the site", '/about-us'),
    pageType: Type.String({ description: 'kind of page', examples: ['page'] }),
    isPublished: Type.Boolean(),
    publishedAt: Type.Unsafe<string | null>({
      type: ['string', 'null'],
      format: 'date-time',
      description: 'when the page was published (UTC, second precision); null if never',
      examples: ['2024-01-05T10:00:00Z'],
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Page', description: 'A page built with the page builder.', additionalProperties: false },
)
export type Page = Static<typeof PageSchema>

/**
 * Reads a page record: every field's limits, a title and path that hold more than whitespace, a
 * path that starts with `/`. A missing id is generated only when the page is written.
 */
export const readPage = recordReader(
  Type.Object({
    ...kindField('page'),
    ...importFields(PageSchema.properties, {
      filled: ['title', 'path'],
      defaults: { pageType: 'page' },
      limits: {
        title: FIELD_LIMITS.pageTitle,
        slug: FIELD_LIMITS.slug,
        path: FIELD_LIMITS.path,
        pageType: FIELD_LIMITS.pageType,
      },
    }),
  }),
  (draft, problems: FieldProblem[]) => {
    if (draft.path !== '' && !draft.path.startsWith('/'))
      problems.push({ field: 'path', message: "must start with '/'" })
    return draft
  },
)

/** A page record completed with its defaults. */
export type PageDraft = ReturnType<typeof readPage>['draft']

/** A page as the dashboard's editor sends it; text as typed. */
export interface PageInput {
  title: string
  slug: string
  path: string
  /** Blank means the default, `page`. */
  pageType: string
  isPublished: boolean
}

/** A page as given, checked: what a write stores. */
export type PageValue = {
  title: string
  slug: string
  path: string
  pageType: string
  isPublished: boolean
}

/** The fields of a page the editor shows, in its order, with the names its problems start with. */
export const PAGE_FIELD_LABELS = { title: 'Title', slug: 'Slug', path: 'Path', pageType: 'Type' } as const
export type PageField = keyof typeof PAGE_FIELD_LABELS

/**
 * Reads a page as the editor sends it, surrounding whitespace trimmed, by {@link readPage}: so a
 * page the dashboard takes is one an import takes. `fields` holds a sentence per wrong field
 * (`Title must not be empty`); the value is only good to store when there is none.
 */
export function readPageInput(input: PageInput): {
  value: PageValue
  fields: Partial<Record<PageField, string>>
} {
  const pageType = input.pageType.trim()
  const { draft, problems } = readPage({
    title: input.title.trim(),
    slug: input.slug.trim(),
    path: input.path.trim(),
    isPublished: input.isPublished,
    ...(pageType === '' ? {} : { pageType }),
  })
  const { title, slug, path, isPublished } = draft
  return {
    value: { title, slug, path, pageType: draft.pageType, isPublished },
    fields: problemsByField(problems, PAGE_FIELD_LABELS),
  }
}

/** A page as the API lists it. */
export function presentPage(row: Selectable<PagesTable>): Page {
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    path: row.path,
    pageType: row.page_type,
    isPublished: row.is_published === 1,
    publishedAt: row.published_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}
