import type { Kysely, Transaction } from 'kysely'
import { UniqueViolationError } from '../db/errors.js'
import { takeLock } from '../db/locks.js'
import type { Database } from '../db/tables.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { newId, randomBase62 } from '../ids.js'
import { FIELD_LIMITS, textProblem } from '../limits.js'
import { now } from '../time.js'
import { type Actor, type AuditAction, recordAudit } from './audit.js'
import { hashPassword, verifyPassword } from './passwords.js'
import { isRole, ROLES, type Role } from './roles.js'

export interface UserView {
  id: string
  email: string
  role: Role
  status: 'active' | 'disabled'
  createdAt: string
  updatedAt: string
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
export const MIN_PASSWORD_LENGTH = 12

export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase()
  // NUL and lone surrogates are refused here, before any query: PostgreSQL's text cannot hold them.
  if (!EMAIL.test(normalized) || textProblem(normalized, FIELD_LIMITS.email) !== null) {
    throw new ValidationError(`'${email}' is not a valid email address`)
  }
  return normalized
}

export function parseRole(role: string): Role {
  if (!isRole(role)) throw new ValidationError(`Unknown role '${role}': use one of ${ROLES.join(', ')}`)
  return role
}

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

/** Names one user: by email (as people and the CLI do) or by id (as dashboard URLs do). */
export type UserRef = string | { id: string }

/** Users and roles. Every change that could leave the site without a usable global admin is refused. */
export function createUserService(db: Kysely<Database>) {
  /** The user `who` names: an email (as the CLI has it) or an id (as the dashboard has it). */
  const findUser = async (trx: Kysely<Database>, who: UserRef) => {
    const users = trx.selectFrom('users').selectAll()
    const row = await (typeof who === 'string'
      ? users.where('email', '=', normalizeEmail(who))
      : users.where('id', '=', who.id)
    ).executeTakeFirst()
    if (!row) throw new NotFoundError(`User '${typeof who === 'string' ? who : who.id}' not found`)
    return row
  }

  /**
   * Refuses a change to `userId` that would leave no enabled global admin. The caller holds the
   * `setup` lock (see `guardAdmins`), so the count cannot go stale before the change commits.
   */
  const assertNotLastAdmin = async (trx: Transaction<Database>, userId: string, action: string) => {
    const others = await trx
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('role', '=', 'global_admin')
      .where('is_disabled', '=', 0)
      .where('id', '!=', userId)
      .executeTakeFirstOrThrow()
    if (Number(others.n) === 0) {
      throw new ValidationError(`Cannot ${action} the last enabled global admin`)
    }
  }

  /**
   * Takes the `setup` lock, which guards who the global admins are: the first admin's creation and
   * every change that could take one away. Without it, two admins demoting each other at once each
   * count the other (PostgreSQL's read committed lets both see the old rows) and both succeed. It is
   * the transaction's first statement, so the row read after it is the one the change applies to.
   */
  const guardAdmins = (trx: Transaction<Database>) => takeLock(trx, 'setup')

  const toView = (row: {
    id: string
    email: string
    role: string
    is_disabled: number
    created_at: string
    updated_at: string
  }): UserView => ({
    id: row.id,
    email: row.email,
    role: parseRole(row.role),
    status: row.is_disabled === 1 ? 'disabled' : 'active',
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  })

  /**
   * Changes one user inside a transaction. A change that could take an admin away gives `guard`: it
   * holds the admins' lock and refuses when `guard(row)` says the row is the last enabled admin;
   * `also` runs in the same transaction, and so does the audit entry `audit` describes (none when it
   * gives no action: nothing changed).
   */
  const update = (
    who: UserRef,
    action: string,
    change: { role?: Role; is_disabled?: 0 | 1 },
    guard: ((row: { role: string; is_disabled: number }) => boolean) | undefined,
    audit: {
      actor: Actor
      action: (row: { role: string; is_disabled: number }) => AuditAction | undefined
      detail?: (row: { role: string }) => Record<string, unknown>
    },
    also?: (trx: Transaction<Database>, userId: string) => Promise<unknown>,
  ) =>
    db.transaction().execute(async (trx) => {
      if (guard !== undefined) await guardAdmins(trx)
      const row = await findUser(trx, who)
      if (guard?.(row)) await assertNotLastAdmin(trx, row.id, action)
      const updatedAt = now()
      await trx
        .updateTable('users')
        .set({ ...change, updated_at: updatedAt })
        .where('id', '=', row.id)
        .execute()
      await also?.(trx, row.id)
      const audited = audit.action(row)
      if (audited !== undefined)
        await recordAudit(trx, {
          actor: audit.actor,
          action: audited,
          target: row.email,
          detail: audit.detail?.(row),
        })
      return toView({ ...row, ...change, updated_at: updatedAt })
    })

  const isEnabledAdmin = (row: { role: string; is_disabled: number }) =>
    row.role === 'global_admin' && row.is_disabled === 0

  return {
    /**
     * Creates a user. Without a password one is generated and returned, so it can be shown once.
     */
    async createUser(input: { email: string; role: string; password?: string }, actor: Actor = 'cli') {
      const { row, generatedPassword } = await newUserRow(input)
      try {
        await db.transaction().execute(async (trx) => {
          await trx.insertInto('users').values(row).execute()
          await recordAudit(trx, {
            actor,
            action: 'user.created',
            target: row.email,
            detail: { role: row.role },
          })
        })
      } catch (error) {
        if (error instanceof UniqueViolationError)
          throw new ValidationError(`A user with email '${row.email}' already exists`)
        throw error
      }
      return { user: toView(row), generatedPassword }
    },

    /** Whether any user exists; until one does, the dashboard offers its one-time setup. */
    hasUsers: async (): Promise<boolean> =>
      (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined,

    /**
     * Creates the first user, a global admin, only while no user exists. Concurrent calls take
     * turns on the `setup` lock, so exactly one of them succeeds whichever instance serves it.
     */
    async createFirstAdmin(input: { email: string; password: string }): Promise<UserView> {
      const { row } = await newUserRow({ ...input, role: 'global_admin' })
      return db.transaction().execute(async (trx) => {
        await takeLock(trx, 'setup')
        if ((await trx.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined)
          throw new ValidationError('Lectern is already set up: sign in instead')
        await trx.insertInto('users').values(row).execute()
        await recordAudit(trx, {
          actor: { email: row.email },
          action: 'user.created',
          target: row.email,
          detail: { role: row.role, setup: true },
        })
        return toView(row)
      })
    },

    listUsers: async (): Promise<UserView[]> =>
      (await db.selectFrom('users').selectAll().orderBy('created_at').orderBy('email').execute()).map(toView),

    /** Changes a user's role; audited as `user.role_changed` when the role really changes. */
    setRole: (who: UserRef, role: string, actor: Actor = 'cli') => {
      const newRole = parseRole(role)
      return update(
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
    },

    /** Disables a user: their keys answer `api_key_inactive` and their dashboard sessions end. */
    disableUser: (who: UserRef, actor: Actor = 'cli') =>
      update(
        who,
        'disable',
        { is_disabled: 1 },
        isEnabledAdmin,
        { actor, action: (row) => (row.is_disabled === 1 ? undefined : 'user.disabled') },
        (trx, userId) => trx.deleteFrom('admin_sessions').where('user_id', '=', userId).execute(),
      ),

    enableUser: (who: UserRef, actor: Actor = 'cli') =>
      update(who, 'enable', { is_disabled: 0 }, undefined, {
        actor,
        action: (row) => (row.is_disabled === 0 ? undefined : 'user.enabled'),
      }),

    /** Deletes a user; their keys are revoked in the same transaction and stay listed as revoked. */
    deleteUser: (who: UserRef, actor: Actor = 'cli'): Promise<void> =>
      db.transaction().execute(async (trx) => {
        await guardAdmins(trx)
        const row = await findUser(trx, who)
        if (isEnabledAdmin(row)) await assertNotLastAdmin(trx, row.id, 'delete')
        const revoked = await trx
          .updateTable('api_keys')
          .set({ revoked_at: now() })
          .where('created_by', '=', row.id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst()
        await trx.deleteFrom('users').where('id', '=', row.id).execute()
        await recordAudit(trx, {
          actor,
          action: 'user.deleted',
          target: row.email,
          detail: { role: row.role, keysRevoked: Number(revoked.numUpdatedRows) },
        })
      }),

    /**
     * Sets a user's password (at least 12 characters) and ends every dashboard session they have, in
     * one transaction with its `user.password_changed` audit entry. Without `password` one is
     * generated and returned, to be shown once (an administrator's reset).
     */
    async setPassword(
      who: UserRef,
      password: string | undefined,
      actor: Actor = 'cli',
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
        const row = await findUser(trx, who)
        const updatedAt = now()
        await trx
          .updateTable('users')
          .set({ password_hash: passwordHash, updated_at: updatedAt })
          .where('id', '=', row.id)
          .execute()
        const ended = await trx.deleteFrom('admin_sessions').where('user_id', '=', row.id).executeTakeFirst()
        const sessionsEnded = Number(ended.numDeletedRows)
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
        return { user: toView({ ...row, updated_at: updatedAt }), generatedPassword, sessionsEnded }
      })
    },

    /** Whether `password` is the user's current one (for changing your own password). */
    async checkPassword(who: UserRef, password: string): Promise<boolean> {
      const row = await findUser(db, who)
      return verifyPassword(password, row.password_hash)
    },

    /** One user, by email or id; a `NotFoundError` when there is none. */
    findUser: async (who: UserRef): Promise<UserView> => toView(await findUser(db, who)),
  }
}

export type UserService = ReturnType<typeof createUserService>
