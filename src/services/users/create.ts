import type { Kysely } from 'kysely'
import { UniqueViolationError } from '../../db/errors.js'
import { takeLock } from '../../db/locks.js'
import { anyUserExists, insertUser } from '../../db/repositories/users.js'
import type { Database } from '../../db/tables.js'
import { ValidationError } from '../../errors.js'
import { newId, randomBase62 } from '../../ids.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { hashPassword } from '../passwords.js'
import { MIN_PASSWORD_LENGTH, normalizeEmail, parseRole } from './rules.js'
import { toUserView, type UserView } from './views.js'

/** A new user's row, with the password hashed (or generated and returned, to be shown once). */
async function newUserRow(input: { email: string; role: string; password?: string }) {
  const email = normalizeEmail(input.email)
  const role = parseRole(input.role)
  const generatedPassword = input.password === undefined ? randomBase62(20) : undefined
  const password = input.password ?? (generatedPassword as string)
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError(`Password must be at least ${MIN_PASSWORD_LENGTH} characters`)
  }
  const timestamp = now()
  const row = {
    id: newId('user'),
    email,
    password_hash: await hashPassword(password),
    role,
    is_disabled: 0 as const,
    created_at: timestamp,
    updated_at: timestamp,
  }
  return { row, generatedPassword }
}

/** Creates a user. Without a password one is generated and returned, so it can be shown once. */
export async function createUser(
  db: Kysely<Database>,
  input: { email: string; role: string; password?: string },
  actor: Actor,
): Promise<{ user: UserView; generatedPassword: string | undefined }> {
  const { row, generatedPassword } = await newUserRow(input)
  try {
    await db.transaction().execute(async (trx) => {
      await insertUser(trx, row)
      await recordAudit(trx, { actor, action: 'user.created', target: row.email, detail: { role: row.role } })
    })
  } catch (error) {
    if (error instanceof UniqueViolationError)
      throw new ValidationError(`A user with email '${row.email}' already exists`)
    throw error
  }
  return { user: toUserView(row), generatedPassword }
}

/**
 * Creates the first user, a global admin, only while no user exists. Concurrent calls take turns
 * on the `setup` lock, so exactly one of them succeeds whichever instance serves it.
 */
export async function createFirstAdmin(
  db: Kysely<Database>,
  input: { email: string; password: string },
): Promise<UserView> {
  const { row } = await newUserRow({ ...input, role: 'global_admin' })
  return db.transaction().execute(async (trx) => {
    await takeLock(trx, 'setup')
    if (await anyUserExists(trx)) throw new ValidationError('Lectern is already set up: sign in instead')
    await insertUser(trx, row)
    await recordAudit(trx, {
      actor: { email: row.email },
      action: 'user.created',
      target: row.email,
      detail: { role: row.role, setup: true },
    })
    return toUserView(row)
  })
}
