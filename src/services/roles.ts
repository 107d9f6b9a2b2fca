/** The permissions an API key can need; each list endpoint requires exactly one. */
export const PERMISSIONS = ['forms:read', 'submissions:read', 'pages:read', 'redirects:read'] as const
export type Permission = (typeof PERMISSIONS)[number]

export const ROLES = ['global_admin', 'editor', 'viewer'] as const
export type Role = (typeof ROLES)[number]

/**
 * What each role may read. A key carries no permissions of its own: it borrows its creator's role
 * at request time, so demoting a user narrows their keys immediately.
 */
export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  global_admin: new Set(PERMISSIONS),
  // Submissions hold personal data, so only global admins read them.
  editor: new Set<Permission>(['forms:read', 'pages:read', 'redirects:read']),
  viewer: new Set<Permission>(['pages:read', 'redirects:read']),
}

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value)
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value)
}

export function roleAllows(role: string, permission: Permission): boolean {
  return isRole(role) && ROLE_PERMISSIONS[role].has(permission)
}

/** Roles that may change the content they can read (through the dashboard); viewers only read. */
const CONTENT_MANAGERS: ReadonlySet<Role> = new Set<Role>(['global_admin', 'editor'])

/**
 * Whether `role` may change the content that `permission` reads: flags and notes of submissions,
 * a form's active flag, a page's published state, redirects. Nobody changes what they cannot read.
 */
export function canManageContent(role: string, permission: Permission): boolean {
  return isRole(role) && CONTENT_MANAGERS.has(role) && roleAllows(role, permission)
}

/** Whether `role` manages users and API keys. */
export function canManageOrganization(role: string): boolean {
  return role === 'global_admin'
}
