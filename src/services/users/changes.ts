import type { Kysely, Transaction } from 'kysely'
import { deleteSessionsOfUser } from '../../db/repositories/admin-sessions.js'
import { revokeKeysCreatedBy } from '../../db/repositories/api-keys.js'
import { deleteUserRow, updateUserRow } from '../../db/repositories/users.js'
import type { Database } from '../../db/tables.js'
import { now } from '../../time.js'
import { type Actor, type AuditAction, recordAudit } from '../audit.js'
import type { Role } from '../roles.js'
import { assertNotLastAdmin, guardAdmins } from './admins.js'
import { isEnabledAdmin, parseRole } from './rules.js'
import { findUserRow, toUserView, type UserRef, type UserView } from './views.js'

type StoredState = { role: string; is_disabled: number }

/**
 * Changes one user inside a transaction. A change that could take an admin away gives `guard`: it
 * holds the admins' lock and refuses when `guard(row)` says the row is the last enabled admin;
 * `also` runs in the same transaction, and so does the audit entry `audit` describes (none when it
 * gives no action: nothing changed).
 */
function updateUser(
  db: Kysely<Database>,
  who: UserRef,
  action: string,
  change: { role?: Role; is_disabled?: 0 | 1 },
  guard: ((row: StoredState) => boolean) | undefined,
  audit: {
    actor: Actor
    action: (row: StoredState) => AuditAction | undefined
    detail?: (row: { role: string }) => Record<string, unknown>
  },
  also?: (trx: Transaction<Database>, userId: string) => Promise<unknown>,
): Promise<UserView> {
  return db.transaction().execute(async (trx) => {
    if (guard !== undefined) await guardAdmins(trx)
    const row = await findUserRow(trx, who)
    if (guard?.(row)) await assertNotLastAdmin(trx, row.id, action)
    const updatedAt = now()
    await updateUserRow(trx, row.id, { ...change, updated_at: updatedAt })
    await also?.(trx, row.id)
    const audited = audit.action(row)
    if (audited !== undefined)
      await recordAudit(trx, {
        actor: audit.actor,
        action: audited,
        target: row.email,
        detail: audit.detail?.(row),
      })
    return toUserView({ ...row, ...change, updated_at: updatedAt })
  })
}

/** Changes a user's role; audited as `user.role_changed` when the role really changes. */
export function setRole(db: Kysely<Database>, who: UserRef, role: string, actor: Actor): Promise<UserView> {
  const newRole = parseRole(role)
  return updateUser(
    db,
    who,
    'demote',
    { role: newRole },
    // A promotion cannot take an admin away, so only other roles wait for the lock.
    newRole === 'global_admin' ? undefined : isEnabledAdmin,
    {
      actor,
      action: (row) => (row.role === newRole ? undefined : 'user.role_changed'),
      detail: (row) => ({ from: row.role, to: newRole }),
    },
  )
}

/** Disables a user: their keys answer `api_key_inactive` and their dashboard sessions end. */
export function disableUser(db: Kysely<Database>, who: UserRef, actor: Actor): Promise<UserView> {
  return updateUser(
    db,
    who,
    'disable',
    { is_disabled: 1 },
    isEnabledAdmin,
    { actor, action: (row) => (row.is_disabled === 1 ? undefined : 'user.disabled') },
    (trx, userId) => deleteSessionsOfUser(trx, userId),
  )
}

export function enableUser(db: Kysely<Database>, who: UserRef, actor: Actor): Promise<UserView> {
  return updateUser(db, who, 'enable', { is_disabled: 0 }, undefined, {
    actor,
    action: (row) => (row.is_disabled === 0 ? undefined : 'user.enabled'),
  })
}

/** Deletes a user; their keys are revoked in the same transaction and stay listed as revoked. */
export function deleteUser(db: Kysely<Database>, who: UserRef, actor: Actor): Promise<void> {
  return db.transaction().execute(async (trx) => {
    await guardAdmins(trx)
    const row = await findUserRow(trx, who)
    if (isEnabledAdmin(row)) await assertNotLastAdmin(trx, row.id, 'delete')
    const keysRevoked = await revokeKeysCreatedBy(trx, row.id, now())
    await deleteUserRow(trx, row.id)
    await recordAudit(trx, {
      actor,
      action: 'user.deleted',
      target: row.email,
      detail: { role: row.role, keysRevoked },
    })
  })
}
