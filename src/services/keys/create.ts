import type { Kysely } from 'kysely'
import { insertApiKey } from '../../db/repositories/api-keys.js'
import type { Database } from '../../db/tables.js'
import { newId } from '../../ids.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { hashApiKey, keyDisplayPrefix, newPlainKey } from '../key-format.js'
import { checkKeyExpiry, checkKeyForms, checkKeyName, checkKeyScopes, findKeyOwner } from './input.js'
import type { ApiKeyView } from './views.js'

/** What a new key is asked to be (see {@link createApiKey}). */
export interface NewApiKey {
  name: string
  userEmail?: string
  expiresAt?: string
  scopes?: readonly string[]
  forms?: readonly string[]
}

/**
 * Creates a key for a global admin. `userEmail` may be omitted when exactly one enabled global
 * admin exists. Returns the plain key, which is not stored and cannot be shown again. The audit
 * entry (`key.created`, by `actor`) is written in the same transaction. `expiresAt` (any ISO 8601
 * date-time in the future) makes the key stop working then. `scopes` narrows the key to some of its
 * owner's permissions and `forms` its `submissions:read` to some forms (both checked, see
 * `checkKeyScopes` and `checkKeyForms`; undefined: no narrowing).
 */
export async function createApiKey(
  db: Kysely<Database>,
  input: NewApiKey,
  actor: Actor,
): Promise<{ key: ApiKeyView; plainKey: string }> {
  const name = checkKeyName(input.name)
  const expiresAt = checkKeyExpiry(input.expiresAt)
  const creator = await findKeyOwner(db, input.userEmail)
  const scopes = checkKeyScopes(input.scopes, creator.role)
  const forms = await checkKeyForms(db, input.forms, scopes, creator.role)
  const plainKey = newPlainKey()
  const row = {
    id: newId('key'),
    name,
    prefix: keyDisplayPrefix(plainKey),
    key_hash: hashApiKey(plainKey),
    created_by: creator.id,
    is_active: 1 as const,
    revoked_at: null,
    created_at: now(),
    last_used_at: null,
    expires_at: expiresAt,
    scopes: scopes === null ? null : JSON.stringify(scopes),
    forms: forms === null ? null : JSON.stringify(forms),
  }
  await db.transaction().execute(async (trx) => {
    await insertApiKey(trx, row)
    await recordAudit(trx, {
      actor,
      action: 'key.created',
      target: row.id,
      detail: { name, prefix: row.prefix, owner: creator.email, expiresAt, scopes, forms },
    })
  })
  const key: ApiKeyView = {
    id: row.id,
    name,
    prefix: row.prefix,
    status: 'active',
    statusReason: null,
    deactivated: false,
    createdBy: creator.email,
    createdAt: row.created_at,
    lastUsedAt: null,
    expiresAt,
    scopes,
    forms,
  }
  return { key, plainKey }
}
