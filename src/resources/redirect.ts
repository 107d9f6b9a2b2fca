import { type Static, Type } from '@sinclair/typebox'
import type { Selectable } from 'kysely'
import type { RedirectsTable } from '../db/tables.js'
import { FIELD_LIMITS } from '../limits.js'
import { Id, SitePath, Timestamp } from './api-fields.js'
import { importFields, kindField, problemsByField, recordReader } from './record-reader.js'
import { normaliseRedirectPath } from './redirect-path.js'

/**
 * A redirect of the site: its API schema, the one reader of a redirect as given (an import record,
 * the dashboard's form, a CSV row) and its presenter. The rules between redirects (one per
 * `fromPath`, no loops, chains) need the others: `services/redirects/` checks them.
 */

export const RedirectTypeSchema = Type.Union([Type.Literal('permanent'), Type.Literal('temporary')], {
  description: 'permanent answers 301, temporary answers 302',
})
export type RedirectType = Static<typeof RedirectTypeSchema>

export const RedirectSchema = Type.Object(
  {
    id: Id('redirect'),
    fromPath: SitePath('the exact path that is redirected (case-sensitive)', '/old-about'),
    toPath: SitePath('where it leads; the query string is carried over', '/about-us'),
    type: RedirectTypeSchema,
    isActive: Type.Boolean({ description: 'only active redirects apply' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Redirect', description: 'A URL redirect of the site.', additionalProperties: false },
)
export type Redirect = Static<typeof RedirectSchema>

/**
 * Reads a redirect record: both paths by the rules for redirect paths, stored percent-decoded
 * (`/%C3%BCber` is kept as `/über`). A missing id is generated only when the redirect is written.
 */
export const readRedirect = recordReader(
  Type.Object({
    ...kindField('redirect'),
    ...importFields(RedirectSchema.properties, {
      filled: ['fromPath', 'toPath'],
      defaults: { type: 'permanent', isActive: true },
      limits: { fromPath: FIELD_LIMITS.path, toPath: FIELD_LIMITS.path },
    }),
  }),
  (draft, problems) => {
    const paths = { fromPath: draft.fromPath, toPath: draft.toPath }
    for (const field of ['fromPath', 'toPath'] as const) {
      if (draft[field] === '') continue
      const normalised = normaliseRedirectPath(draft[field])
      if (normalised.problem !== null) problems.push({ field, message: normalised.problem })
      else paths[field] = normalised.path
    }
    return { ...draft, ...paths }
  },
)

/** A redirect record completed with its defaults. */
export type RedirectDraft = ReturnType<typeof readRedirect>['draft']

/** A redirect as a person enters it: in a form, or as a row of a CSV file. */
export interface RedirectInput {
  fromPath: string
  toPath: string
  /** `permanent` (301, the default) or `temporary` (302). */
  type?: string
  isActive?: boolean
}

/** A redirect as entered, checked and normalised. */
export interface RedirectValue {
  fromPath: string
  toPath: string
  type: RedirectType
  isActive: boolean
}

/** The fields of a redirect a person enters, with the names their problems start with. */
const REDIRECT_FIELD_LABELS = { fromPath: 'From path', toPath: 'To path', type: 'Type' } as const

/** The fields of a redirect a person enters, each of which a problem can be said beside. */
export type RedirectField = keyof typeof REDIRECT_FIELD_LABELS

/**
 * Reads one redirect as a person entered it by {@link readRedirect}, surrounding whitespace
 * trimmed and a blank type read as the default; returns it normalised with every problem found,
 * each a sentence naming the field (`From path is required`).
 */
export function checkRedirectInput(input: RedirectInput): {
  value: RedirectValue
  problems: string[]
  fields: Partial<Record<RedirectField, string>>
} {
  const fromPath = input.fromPath.trim()
  const toPath = input.toPath.trim()
  const type = (input.type ?? '').trim()
  const { draft, problems } = readRedirect({
    ...(fromPath === '' ? {} : { fromPath }),
    ...(toPath === '' ? {} : { toPath }),
    ...(type === '' ? {} : { type }),
    isActive: input.isActive ?? true,
  })
  const fields = problemsByField(problems, REDIRECT_FIELD_LABELS)
  // People typed the type: it is quoted as typed rather than as JSON.
  if (fields.type !== undefined) fields.type = `Type must be 'permanent' or 'temporary', not '${type}'`
  return {
    value: { fromPath: draft.fromPath, toPath: draft.toPath, type: draft.type, isActive: draft.isActive },
    problems: Object.values(fields),
    fields,
  }
}

/** A redirect as the API lists it. */
export function presentRedirect(row: Selectable<RedirectsTable>): Redirect {
  return {
    id: row.id,
    fromPath: row.from_path,
    toPath: row.to_path,
    type: row.type,
    isActive: Number(row.is_active) === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}
