import { createHash, randomBytes } from 'node:crypto'
import { secretsMatch } from '../../constant-time.js'

/** 32 random bytes, base64url: what a session token looks like. Anything else is not looked up. */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/

/** The stored id of a session: the SHA-256 of its cookie's token, so a stolen table opens nothing. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')

/** Compares a submitted CSRF token with the session's in constant time. */
export function csrfTokenMatches(expected: string, given: unknown): boolean {
  return typeof given === 'string' && secretsMatch(expected, given)
}

/** A fresh random token (256 bits, base64url), for session cookies and CSRF tokens. */
export function newToken(): string {
  return randomBytes(32).toString('base64url')
}
