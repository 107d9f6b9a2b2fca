import { canManageContent, canManageOrganization, type Permission, roleAllows } from '../services/roles.js'
import type { AdminSession } from '../services/sessions.js'

/**
 * Who may use a dashboard route. Every route declares one; a route without is refused to everyone.
 * - `public`: anyone (setup and sign-in; their forms are protected by a double-submit token);
 * - `signed-in`: any signed-in user;
 * - `organization`: global admins (users and API keys);
 * - `{ read }`: users whose role reads that content; `{ manage }`: users who may also change it.
 */
export type Access = 'public' | 'signed-in' | 'organization' | { read: Permission } | { manage: Permission }

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access
  }
  interface FastifyRequest {
    /** The dashboard session of the request, or null when signed out. */
    admin: AdminSession | null
  }
}

/** Whether a user of `role` may use a route declared with `access`. */
export function allows(access: Access | undefined, role: string): boolean {
  if (access === undefined) return false
  if (access === 'public' || access === 'signed-in') return true
  if (access === 'organization') return canManageOrganization(role)
  if ('read' in access) return roleAllows(role, access.read)
  return canManageContent(role, access.manage)
}
