import type { Selectable } from 'kysely'
import type { Executor } from '../executor.js'
import type { UsersTable } from '../tables.js'

/**
 * The users table's SQL, for the user, key and session services: they keep the rules (the last
 * admin, the `setup` lock), the transactions and the audit entries, and hand their transaction in.
 */

export type UserRow = Selectable<UsersTable>

/** The user with this (normalized) email, if there is one. */
export function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst()
}

/** The user `id`, if there is one. */
export function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

/** User `id`'s password hash, if there is such a user. */
export async function findPasswordHash(db: Executor, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst()
  return row?.password_hash
}

/** Whether any user exists. */
export async function anyUserExists(db: Executor): Promise<boolean> {
  return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined
}

/** Every user, in the order they were created (then by email). */
export function listUserRows(db: Executor): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at').orderBy('email').execute()
}

/** Up to `limit` enabled global admins. */
export function enabledAdmins(db: Executor, limit: number): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('role', '=', 'global_admin')
    .where('is_disabled', '=', 0)
    .limit(limit)
    .execute()
}

/** How many enabled global admins there are besides user `userId`. */
export async function countOtherEnabledAdmins(trx: Executor, userId: string): Promise<number> {
  const others = await trx
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('role', '=', 'global_admin')
    .where('is_disabled', '=', 0)
    .where('id', '!=', userId)
    .executeTakeFirstOrThrow()
  return Number(others.n)
}

export async function insertUser(trx: Executor, row: UserRow): Promise<void> {
  await trx.insertInto('users').values(row).execute()
}

export async function updateUserRow(
  trx: Executor,
  id: string,
  fields: Partial<Omit<UserRow, 'id' | 'created_at'>>,
): Promise<void> {
  await trx.updateTable('users').set(fields).where('id', '=', id).execute()
}

export async function deleteUserRow(trx: Executor, id: string): Promise<void> {
  await trx.deleteFrom('users').where('id', '=', id).execute()
}

/**
 * Takes user `id`'s row if its password hash is still `passwordHash` and it is still enabled (an
 * update that changes nothing): false when a reset, a disable or a deletion came first. As a
 * transaction's first statement it waits for such a change to commit.
 */
export async function holdUnchangedUser(trx: Executor, id: string, passwordHash: string): Promise<boolean> {
  const still = await trx
    .updateTable('users')
    .set({ password_hash: passwordHash })
    .where('id', '=', id)
    .where('password_hash', '=', passwordHash)
    .where('is_disabled', '=', 0)
    .executeTakeFirst()
  return still.numUpdatedRows > 0n
}
