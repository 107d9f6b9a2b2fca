import type { RedirectType } from '../../schemas.js'
import { normaliseRedirectPath } from './rules.js'

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

/** The fields of a redirect a person enters, each of which a problem can be said beside. */
export type RedirectField = 'fromPath' | 'toPath' | 'type'

/**
 * Checks one redirect as a person entered it; returns it normalised (paths trimmed and
 * percent-decoded, defaults applied) with every problem found, each a sentence naming the field.
 */
export function checkRedirectInput(input: RedirectInput): {
  value: RedirectValue
  problems: string[]
  fields: Partial<Record<RedirectField, string>>
} {
  const fields: Partial<Record<RedirectField, string>> = {}
  const path = (field: RedirectField, label: string, given: string) => {
    const trimmed = given.trim()
    if (trimmed === '') {
      fields[field] = `${label} is required`
      return trimmed
    }
    const normalised = normaliseRedirectPath(trimmed)
    if (normalised.problem !== null) fields[field] = `${label} ${normalised.problem}`
    return normalised.path ?? trimmed
  }
  const fromPath = path('fromPath', 'From path', input.fromPath)
  const toPath = path('toPath', 'To path', input.toPath)
  const type = (input.type ?? '').trim() || 'permanent'
  if (type !== 'permanent' && type !== 'temporary')
    fields.type = `Type must be 'permanent' or 'temporary', not '${type}'`
  return {
    value: { fromPath, toPath, type: type as RedirectType, isActive: input.isActive ?? true },
    problems: Object.values(fields),
    fields,
  }
}
