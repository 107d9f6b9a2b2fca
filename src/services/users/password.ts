import type { Kysely } from 'kysely'
import { deleteSessionsOfUser } from '../../db/repositories/admin-sessions.js'
import { updateUserRow } from '../../db/repositories/users.js'
import type { Database } from '../../db/tables.js'
import { ValidationError } from '../../errors.js'
import { randomBase62 } from '../../ids.js'
import { textProblem } from '../../limits.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { hashPassword, verifyPassword } from '../passwords.js'
import { MIN_PASSWORD_LENGTH } from './rules.js'
import { findUserRow, toUserView, type UserRef, type UserView } from './views.js'

/**
 * Sets a user's password (at least 12 characters) and ends every dashboard session they have, in
 * one transaction with its `user.password_changed` audit entry. Without `password` one is generated
 * and returned, to be shown once (an administrator's reset).
 */
export async function setPassword(
  db: Kysely<Database>,
  who: UserRef,
  password: string | undefined,
  actor: Actor,
): Promise<{ user: UserView; generatedPassword?: string; sessionsEnded: number }> {
  const generatedPassword = password === undefined ? randomBase62(20) : undefined
  const chosen = password ?? (generatedPassword as string)
  if (chosen.length < MIN_PASSWORD_LENGTH)
    throw new ValidationError(`Password must be at least ${MIN_PASSWORD_LENGTH} characters`)
  if (textProblem(chosen, 1024) !== null)
    throw new ValidationError('Password must be at most 1024 characters, without NUL or lone surrogates')
  // Hashed before the transaction: it takes a while, and needs no database.
  const passwordHash = await hashPassword(chosen)
  return db.transaction().execute(async (trx) => {
    const row = await findUserRow(trx, who)
    const updatedAt = now()
    await updateUserRow(trx, row.id, { password_hash: passwordHash, updated_at: updatedAt })
    const sessionsEnded = await deleteSessionsOfUser(trx, row.id)
    await recordAudit(trx, {
      actor,
      action: 'user.password_changed',
      target: row.email,
      detail: {
        how:
          generatedPassword !== undefined
            ? 'reset'
            : typeof actor !== 'string' && actor.email === row.email
              ? 'own'
              : 'set',
        sessionsEnded,
      },
    })
    return { user: toUserView({ ...row, updated_at: updatedAt }), generatedPassword, sessionsEnded }
  })
}

/** Whether `password` is the user's current one (for changing your own password). */
export async function checkPassword(db: Kysely<Database>, who: UserRef, password: string): Promise<boolean> {
  const row = await findUserRow(db, who)
  return verifyPassword(password, row.password_hash)
}
