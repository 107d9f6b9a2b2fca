import type { Kysely } from 'kysely'
import { existingFormIds } from '../../db/repositories/forms.js'
import { enabledAdmins, findUserByEmail, type UserRow } from '../../db/repositories/users.js'
import type { Database } from '../../db/tables.js'
import { NotFoundError, ValidationError } from '../../errors.js'
import { isSafeId } from '../../ids.js'
import { characterProblem, FIELD_LIMITS } from '../../limits.js'
import { parseTimestamp } from '../../time.js'
import { MAX_KEY_FORMS } from '../key-scopes.js'
import { isPermission, PERMISSIONS, type Permission, roleAllows } from '../roles.js'
import { normalizeEmail } from '../users/rules.js'

/** A key's name, trimmed, or a `ValidationError` saying what is wrong with it. */
export function checkKeyName(value: string): string {
  const name = value.trim()
  if (name.length === 0 || name.length > FIELD_LIMITS.keyName)
    throw ValidationError.about('name', `Key name must be 1 to ${FIELD_LIMITS.keyName} characters`)
  const characters = characterProblem(name)
  if (characters !== null) throw ValidationError.about('name', `Key name ${characters}`)
  return name
}

/** An expiry as given (any ISO 8601 date-time, or a date: its start, UTC), which must be in the future. */
export function checkKeyExpiry(value: string | undefined): string | null {
  if (value === undefined || value.trim() === '') return null
  const expiresAt = value.length <= 64 ? parseTimestamp(value.trim()) : null
  if (expiresAt === null)
    throw ValidationError.about(
      'expires',
      `Expiry '${value.slice(0, 64)}' is not an ISO 8601 date-time (e.g. 2030-01-31T00:00:00Z)`,
    )
  if (Date.parse(expiresAt) <= Date.now())
    throw ValidationError.about(
      'expires',
      `Expiry ${expiresAt} is in the past: a key must expire in the future`,
    )
  return expiresAt
}

/**
 * The scopes asked for, checked against the creator's role: a key is created with no more than its
 * creator may do (least privilege), so a scope the role lacks is refused rather than kept dormant.
 * Undefined: no narrowing.
 */
export function checkKeyScopes(values: readonly string[] | undefined, role: string): Permission[] | null {
  if (values === undefined) return null
  const asked = new Set(values.map((value) => value.trim()).filter((value) => value !== ''))
  if (asked.size === 0)
    throw ValidationError.about(
      'scopes',
      `Give at least one scope (of ${PERMISSIONS.join(', ')}), or none for all`,
    )
  for (const value of asked) {
    if (!isPermission(value))
      throw ValidationError.about(
        'scopes',
        `Unknown scope '${value.slice(0, 64)}': scopes are ${PERMISSIONS.join(', ')}`,
      )
    if (!roleAllows(role, value))
      throw ValidationError.about(
        'scopes',
        `Scope '${value}' is not a permission of the key's owner (${role}): a key cannot do more than its owner`,
      )
  }
  return PERMISSIONS.filter((permission) => asked.has(permission))
}

/**
 * The forms asked for: each must exist, and the key must be able to read submissions, or the
 * narrowing would grant nothing. Undefined: every form.
 */
export async function checkKeyForms(
  db: Kysely<Database>,
  values: readonly string[] | undefined,
  scopes: Permission[] | null,
  role: string,
): Promise<string[] | null> {
  if (values === undefined) return null
  const ids = [...new Set(values.map((value) => value.trim()).filter((value) => value !== ''))]
  if (ids.length === 0)
    throw ValidationError.about('forms', 'Give at least one form id, or none for every form')
  if (ids.length > MAX_KEY_FORMS)
    throw ValidationError.about(
      'forms',
      `A key can be narrowed to at most ${MAX_KEY_FORMS} forms; ${ids.length} given`,
    )
  if (!roleAllows(role, 'submissions:read') || (scopes !== null && !scopes.includes('submissions:read')))
    throw ValidationError.about(
      'forms',
      "Forms narrow only the 'submissions:read' permission, which this key would not have: add the scope submissions:read or leave the forms out",
    )
  const found = await existingFormIds(db, ids.filter(isSafeId))
  const unknown = ids.filter((id) => !found.has(id))
  if (unknown.length > 0)
    throw ValidationError.about(
      'forms',
      `Unknown form${unknown.length > 1 ? 's' : ''} ${unknown
        .slice(0, 5)
        .map((id) => `'${id.slice(0, 64)}'`)
        .join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}`,
    )
  return ids
}

/** The global admin a new key will belong to: the one named, or the only one there is. */
export async function findKeyOwner(db: Kysely<Database>, userEmail: string | undefined): Promise<UserRow> {
  if (userEmail !== undefined) {
    const email = normalizeEmail(userEmail)
    const user = await findUserByEmail(db, email)
    if (!user) throw new NotFoundError(`User '${userEmail}' not found`)
    if (user.role !== 'global_admin')
      throw new ValidationError(`Only a global admin can create API keys; '${email}' is ${user.role}`)
    if (user.is_disabled === 1) throw new ValidationError(`User '${email}' is disabled`)
    return user
  }
  const admins = await enabledAdmins(db, 2)
  if (admins.length === 0)
    throw new NotFoundError('No global admin exists: create one first with `users create`')
  if (admins.length > 1)
    throw new ValidationError('Several global admins exist: name the key owner with --user')
  return admins[0]
}
