import type { Kysely } from 'kysely'
import type { Database } from '../db/tables.js'
import { type AdminSession, authenticate, type Flash, setFlash, signOut } from './sessions/authenticate.js'
import { checkCurrentPassword } from './sessions/password-check.js'
import { type SessionOptions, sessionContext } from './sessions/settings.js'
import { clearSignInFailures, createSignIn } from './sessions/sign-in.js'

export type { AdminSession, Flash } from './sessions/authenticate.js'
export type { PasswordCheckResult } from './sessions/password-check.js'
export { SESSION_DEFAULTS, type SessionOptions } from './sessions/settings.js'
export type { SignInInput, SignInResult } from './sessions/sign-in.js'
export { SignInUnavailableError } from './sessions/throttle.js'
export { csrfTokenMatches, newToken } from './sessions/tokens.js'

/**
 * Dashboard sessions and sign-in throttling, both kept in the database so that every instance sees
 * the same sessions and counts the same failures. A session is looked up with its user on every
 * request, so a role change applies at once and a disabled or deleted user is signed out at once.
 * The operations are in `sessions/`; the SQL in `db/repositories/` (admin-sessions, login-attempts,
 * password-checks).
 */
export function createSessionService(db: Kysely<Database>, options: SessionOptions = {}) {
  const context = sessionContext(db, options)
  return {
    /** Checks an email and password and opens a session, under the throttle (see `sessions/sign-in.ts`). */
    signIn: createSignIn(context),
    /** The session a cookie's token stands for, or null when it is unknown or has ended. */
    authenticate: (token: string): Promise<AdminSession | null> => authenticate(context, token),
    /** Checks a signed-in user's current password, under its own throttle (see `sessions/password-check.ts`). */
    checkCurrentPassword: (session: AdminSession, password: string, ip: string) =>
      checkCurrentPassword(context, session, password, ip),
    /** Clears the sign-in throttle of an email; returns how many failures were cleared. */
    clearSignInFailures: (email: string) => clearSignInFailures(context, email),
    /** Ends the session a token stands for; an unknown token is ignored. */
    signOut: (token: string) => signOut(context, token),
    /** Leaves a message for the session's next page (after a redirect). */
    setFlash: (sessionId: string, flash: Flash) => setFlash(context, sessionId, flash),
  }
}

export type SessionService = ReturnType<typeof createSessionService>
