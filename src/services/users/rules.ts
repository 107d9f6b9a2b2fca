import { ValidationError } from '../../errors.js'
import { FIELD_LIMITS, textProblem } from '../../limits.js'
import { isRole, ROLES, type Role } from '../roles.js'

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const MIN_PASSWORD_LENGTH = 12

/** An email as stored (trimmed, lower-cased), or a `ValidationError` when it is not one. */
export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase()
  // NUL and lone surrogates are refused here, before any query: PostgreSQL's text cannot hold them.
  if (!EMAIL.test(normalized) || textProblem(normalized, FIELD_LIMITS.email) !== null) {
    throw new ValidationError(`'${email}' is not a valid email address`)
  }
  return normalized
}

/** A role by name, or a `ValidationError` listing the roles there are. */
export function parseRole(role: string): Role {
  if (!isRole(role)) throw new ValidationError(`Unknown role '${role}': use one of ${ROLES.join(', ')}`)
  return role
}

/** Whether this user is an enabled global admin, of whom there must always be one. */
export const isEnabledAdmin = (row: { role: string; is_disabled: number }) =>
  row.role === 'global_admin' && row.is_disabled === 0
