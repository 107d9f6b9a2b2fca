import { randomBytes, scryptSync } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/tables.js'
import type { Role } from '../../src/services/roles.js'
import { buildUser } from '../factories.js'
import { PASSWORD, signedInAs } from './support.js'

/**
 * A stored hash of `password` at a low scrypt cost (N=2^10), in the product's self-describing
 * `scrypt$N$r$p$salt$hash` form. The product checks a password with the parameters its hash names,
 * so a sign-in against it runs the real check in a millisecond instead of a large fraction of a
 * second. Only for tests of what surrounds the check (throttles, sessions, password changes): the
 * product keeps hashing every new password at its own cost.
 */
export function lowCostHash(password: string): string {
  const params = { N: 2 ** 10, r: 8, p: 1 }
  const salt = randomBytes(16)
  const hash = scryptSync(password.normalize('NFKC'), salt, 32, params)
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64'), hash.toString('base64')].join('$')
}

const passwordHash = lowCostHash(PASSWORD)

/** A user who can sign in with `PASSWORD`, checked at low cost (see `lowCostHash`). */
export function buildSignInUser(
  db: Kysely<Database>,
  input: { role?: Role; email?: string; disabled?: boolean } = {},
) {
  return buildUser(db, { ...input, passwordHash })
}

/** Signs a new client in as a new user of `role` (see `buildSignInUser`); fails the test if that does not work. */
export async function signedInLowCost(
  app: FastifyInstance,
  db: Kysely<Database>,
  role: Role = 'global_admin',
) {
  return signedInAs(app, await buildSignInUser(db, { role }))
}
