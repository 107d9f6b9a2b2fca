import {
  deleteSession,
  findSessionWithUser,
  setSessionFlash,
  takeSessionFlash,
  touchSession,
} from '../../db/repositories/admin-sessions.js'
import { isRole, type Role } from '../roles.js'
import type { SessionContext } from './settings.js'
import { hashToken, TOKEN_SHAPE } from './tokens.js'

/** `last_seen_at` is written at most this often per session, so reading pages does not mean writing. */
const LAST_SEEN_RESOLUTION_MS = 60_000

export interface Flash {
  kind: 'success' | 'error'
  text: string
}

/** The signed-in user behind a dashboard request, read fresh from the database on every request. */
export interface AdminSession {
  /** The stored id (a hash of the cookie's token), for `setFlash`. */
  id: string
  csrfToken: string
  user: { id: string; email: string; role: Role }
  /** The message left by the previous request, already cleared from the session. */
  flash: Flash | null
}

function readFlash(value: string | null): Flash | null {
  if (value === null) return null
  try {
    const parsed = JSON.parse(value) as Flash
    return parsed.kind === 'error' || parsed.kind === 'success' ? parsed : null
  } catch {
    return null
  }
}

/**
 * The session a cookie's token stands for, or null when it is unknown, idle too long, past its
 * absolute lifetime, or its user is disabled (such sessions are deleted on the way).
 */
export async function authenticate(context: SessionContext, token: string): Promise<AdminSession | null> {
  const { db, settings, clock, stamp } = context
  if (!TOKEN_SHAPE.test(token)) return null
  const id = hashToken(token)
  const row = await findSessionWithUser(db, id)
  if (!row) return null
  const current = clock()
  const idle = current - Date.parse(row.last_seen_at)
  const age = current - Date.parse(row.created_at)
  if (
    row.is_disabled === 1 ||
    !isRole(row.role) ||
    idle >= settings.idleTimeoutMs ||
    age >= settings.absoluteTimeoutMs
  ) {
    await deleteSession(db, id)
    return null
  }
  const touch = idle >= LAST_SEEN_RESOLUTION_MS
  let flash: string | null = null
  if (row.flash !== null) {
    // Taken only if it is still there: of two pages of one session asked at once, one shows it.
    if (await takeSessionFlash(db, id, row.flash, touch ? stamp(current) : undefined)) flash = row.flash
  }
  if (touch && flash === null) await touchSession(db, id, stamp(current))
  return {
    id,
    csrfToken: row.csrf_token,
    user: { id: row.user_id, email: row.email, role: row.role },
    flash: readFlash(flash),
  }
}

/** Ends the session a token stands for; an unknown token is ignored. */
export async function signOut(context: SessionContext, token: string): Promise<void> {
  if (TOKEN_SHAPE.test(token)) await deleteSession(context.db, hashToken(token))
}

/** Leaves a message for the session's next page (after a redirect). */
export async function setFlash(context: SessionContext, sessionId: string, flash: Flash): Promise<void> {
  await setSessionFlash(context.db, sessionId, JSON.stringify(flash))
}
