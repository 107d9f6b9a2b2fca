import { PERMISSIONS, type Permission, ROLE_PERMISSIONS, roleAllows } from './roles.js'

/**
 * What a key is narrowed to, beyond its creator's role: some of the permissions (`scopes`), and
 * for `submissions:read` some forms (`forms`). Null means no narrowing. A scope never grants what
 * the creator's role lacks: the effective permission is always the intersection, at request time.
 */
export interface KeyScope {
  scopes: ReadonlySet<Permission> | null
  forms: ReadonlySet<string> | null
}

export const UNSCOPED: KeyScope = Object.freeze({ scopes: null, forms: null })

/** At most this many forms per key: a narrowing is a short list, and it is read on every request. */
export const MAX_KEY_FORMS = 100

/** The stored columns as lists, in a stable order (permissions in their canonical order). */
export function scopeLists(scope: KeyScope): { scopes: Permission[] | null; forms: string[] | null } {
  return {
    scopes: scope.scopes === null ? null : PERMISSIONS.filter((p) => scope.scopes?.has(p)),
    forms: scope.forms === null ? null : [...scope.forms],
  }
}

// The stored texts of the keys in use, parsed once: the lookup runs on every request, and most
// keys are unscoped (both null, no parse at all).
const parsed = new Map<string, ReadonlySet<string>>()
const MAX_PARSED = 10_000

function parseList(text: string | null): ReadonlySet<string> | null {
  if (text === null) return null
  let set = parsed.get(text)
  if (set === undefined) {
    set = new Set(stringsOf(text))
    if (parsed.size >= MAX_PARSED) parsed.clear()
    parsed.set(text, set)
  }
  return set
}

/**
 * The strings of a stored JSON array. Text that is not one (written by hand, say) narrows the key to
 * nothing rather than failing every request or, worse, lifting the narrowing.
 */
function stringsOf(text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []
  } catch {
    return []
  }
}

/** A key's scope from its stored columns (JSON arrays, or null). */
export function readKeyScope(scopes: string | null, forms: string | null): KeyScope {
  if (scopes === null && forms === null) return UNSCOPED
  return { scopes: parseList(scopes) as ReadonlySet<Permission> | null, forms: parseList(forms) }
}

/** The permissions a key with `scope`, created by a user of `role`, has now. */
export function effectivePermissions(role: string, scope: KeyScope): Permission[] {
  return PERMISSIONS.filter((p) => roleAllows(role, p) && (scope.scopes === null || scope.scopes.has(p)))
}

/**
 * Why a key may not use `permission` (on form `formId`, for submissions), or null when it may.
 * The role is checked first: a demoted creator narrows every key, whatever its scopes.
 */
export function refusal(
  role: string,
  scope: KeyScope,
  permission: Permission,
  formId?: string,
): string | null {
  if (!roleAllows(role, permission)) return `This API key does not have the '${permission}' permission`
  if (scope.scopes !== null && !scope.scopes.has(permission)) {
    const granted = [...scope.scopes].map((p) => `'${p}'`).join(', ')
    return `This API key does not have the '${permission}' permission: it is limited to ${granted}`
  }
  if (
    permission === 'submissions:read' &&
    scope.forms !== null &&
    formId !== undefined &&
    !scope.forms.has(formId)
  )
    return `This API key does not have the 'submissions:read' permission on form '${formId}': it may read only the submissions of the forms it was created for`
  return null
}

/** The permissions of `role`, for messages and the dashboard's choices. */
export const rolePermissions = (role: string): Permission[] =>
  PERMISSIONS.filter((p) => ROLE_PERMISSIONS[role as keyof typeof ROLE_PERMISSIONS]?.has(p) === true)
