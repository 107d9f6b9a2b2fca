import type { Kysely } from 'kysely'
import { anyUserExists, listUserRows } from '../db/repositories/users.js'
import type { Database } from '../db/tables.js'
import type { Actor } from './audit.js'
import { deleteUser, disableUser, enableUser, setRole } from './users/changes.js'
import { createFirstAdmin, createUser } from './users/create.js'
import { checkPassword, setPassword } from './users/password.js'
import { findUserRow, toUserView, type UserRef, type UserView } from './users/views.js'

export { MIN_PASSWORD_LENGTH, normalizeEmail, parseRole } from './users/rules.js'
export type { UserRef, UserView } from './users/views.js'

/**
 * Users and roles. Every change that could leave the site without a usable global admin is refused
 * (`users/admins.ts`). The operations are in `users/`; the SQL in `db/repositories/users.ts`.
 */
export function createUserService(db: Kysely<Database>) {
  return {
    /** Creates a user. Without a password one is generated and returned, so it can be shown once. */
    createUser: (input: { email: string; role: string; password?: string }, actor: Actor = 'cli') =>
      createUser(db, input, actor),
    /** Whether any user exists; until one does, the dashboard offers its one-time setup. */
    hasUsers: (): Promise<boolean> => anyUserExists(db),
    /** Creates the first user, a global admin, only while no user exists. */
    createFirstAdmin: (input: { email: string; password: string }) => createFirstAdmin(db, input),
    listUsers: async (): Promise<UserView[]> => (await listUserRows(db)).map(toUserView),
    /** Changes a user's role; audited as `user.role_changed` when the role really changes. */
    setRole: (who: UserRef, role: string, actor: Actor = 'cli') => setRole(db, who, role, actor),
    /** Disables a user: their keys answer `api_key_inactive` and their dashboard sessions end. */
    disableUser: (who: UserRef, actor: Actor = 'cli') => disableUser(db, who, actor),
    enableUser: (who: UserRef, actor: Actor = 'cli') => enableUser(db, who, actor),
    /** Deletes a user; their keys are revoked in the same transaction and stay listed as revoked. */
    deleteUser: (who: UserRef, actor: Actor = 'cli') => deleteUser(db, who, actor),
    /** Sets a user's password and ends their dashboard sessions (see `users/password.ts`). */
    setPassword: (who: UserRef, password: string | undefined, actor: Actor = 'cli') =>
      setPassword(db, who, password, actor),
    /** Whether `password` is the user's current one (for changing your own password). */
    checkPassword: (who: UserRef, password: string) => checkPassword(db, who, password),
    /** One user, by email or id; a `NotFoundError` when there is none. */
    findUser: async (who: UserRef): Promise<UserView> => toUserView(await findUserRow(db, who)),
  }
}

export type UserService = ReturnType<typeof createUserService>
