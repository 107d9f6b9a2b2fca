import type { Kysely } from 'kysely'
import {
  findKeyById,
  findKeyViewRow,
  renameKey,
  revokeKey,
  setKeyActive,
} from '../../db/repositories/api-keys.js'
import type { Database } from '../../db/tables.js'
import { NotFoundError, ValidationError } from '../../errors.js'
import { isSafeId } from '../../ids.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { checkKeyName } from './input.js'
import { type ApiKeyView, toKeyView } from './views.js'

/** Key `id`'s name and revocation time; a `NotFoundError` when there is no such key. */
async function findKey(db: Kysely<Database>, id: string) {
  // No key has an id outside the id alphabet: answered without a query.
  if (!isSafeId(id)) throw new NotFoundError(`API key '${id}' not found`)
  const row = await findKeyById(db, id)
  if (!row) throw new NotFoundError(`API key '${id}' not found`)
  return row
}

/**
 * Switches key `id` on or off, audited as `key.activated` or `key.deactivated`; a revoked key
 * cannot be switched either way.
 */
export async function setApiKeyActive(
  db: Kysely<Database>,
  id: string,
  active: boolean,
  actor: Actor,
): Promise<void> {
  const row = await findKey(db, id)
  if (row.revoked_at !== null) {
    throw new ValidationError(
      `API key '${id}' is revoked; a revoked key cannot be ${active ? 'activated' : 'deactivated'}`,
    )
  }
  await db.transaction().execute(async (trx) => {
    await setKeyActive(trx, id, active)
    await recordAudit(trx, {
      actor,
      action: active ? 'key.activated' : 'key.deactivated',
      target: id,
      detail: { name: row.name },
    })
  })
}

/** Gives a key a new name (revoked keys too: the name is only a label); audited as `key.renamed`. */
export async function renameApiKey(
  db: Kysely<Database>,
  id: string,
  newName: string,
  actor: Actor,
): Promise<ApiKeyView> {
  const name = checkKeyName(newName)
  const row = await findKey(db, id)
  await db.transaction().execute(async (trx) => {
    await renameKey(trx, id, name)
    if (row.name !== name)
      await recordAudit(trx, {
        actor,
        action: 'key.renamed',
        target: id,
        detail: { from: row.name, to: name },
      })
  })
  const renamed = await findKeyViewRow(db, id)
  if (!renamed) throw new NotFoundError(`API key '${id}' not found`)
  return toKeyView(renamed)
}

/**
 * Revokes a key for good. Revoking twice is harmless and keeps the first revocation time; only the
 * first revocation is audited.
 */
export async function revokeApiKey(db: Kysely<Database>, id: string, actor: Actor): Promise<void> {
  const row = await findKey(db, id)
  await db.transaction().execute(async (trx) => {
    if (await revokeKey(trx, id, now()))
      await recordAudit(trx, { actor, action: 'key.revoked', target: id, detail: { name: row.name } })
  })
}
