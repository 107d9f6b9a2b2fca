import type { Executor } from '../../db/executor.js'
import { findUserByEmail, findUserById, type UserRow } from '../../db/repositories/users.js'
import { NotFoundError } from '../../errors.js'
import type { Role } from '../roles.js'
import { normalizeEmail, parseRole } from './rules.js'

export interface UserView {
  id: string
  email: string
  role: Role
  status: 'active' | 'disabled'
  createdAt: string
  updatedAt: string
}

/** Names one user: by email (as people and the CLI do) or by id (as dashboard URLs do). */
export type UserRef = string | { id: string }

/** A stored user as every face shows it. */
export function toUserView(row: Omit<UserRow, 'password_hash'>): UserView {
  return {
    id: row.id,
    email: row.email,
    role: parseRole(row.role),
    status: row.is_disabled === 1 ? 'disabled' : 'active',
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/** The user `who` names: an email (as the CLI has it) or an id (as the dashboard has it). */
export async function findUserRow(db: Executor, who: UserRef): Promise<UserRow> {
  const row = await (typeof who === 'string'
    ? findUserByEmail(db, normalizeEmail(who))
    : findUserById(db, who.id))
  if (!row) throw new NotFoundError(`User '${typeof who === 'string' ? who : who.id}' not found`)
  return row
}
