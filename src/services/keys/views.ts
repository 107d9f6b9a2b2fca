import type { Kysely } from 'kysely'
import {
  findKeyAccessRow,
  findKeyViewRow,
  type KeyViewRow,
  listKeyViewRows,
} from '../../db/repositories/api-keys.js'
import { formTitles } from '../../db/repositories/forms.js'
import type { Database } from '../../db/tables.js'
import { NotFoundError } from '../../errors.js'
import { isSafeId } from '../../ids.js'
import { hasExpired } from '../key-format.js'
import { effectivePermissions, readKeyScope, scopeLists } from '../key-scopes.js'
import type { Permission } from '../roles.js'

export type KeyStatus = 'active' | 'inactive' | 'revoked'

export interface ApiKeyView {
  id: string
  name: string
  prefix: string
  /** What the API makes of the key now (see {@link keyStatus}). */
  status: KeyStatus
  /**
   * Why a key is not active, when its own switch does not say it all: `deactivated`, `owner
   * disabled`, `expired` (several joined by `, `), `owner deleted`; null for an active key and a
   * revoked one.
   */
  statusReason: string | null
  /** Whether the key itself was switched off (`deactivate`), whatever its owner and expiry. */
  deactivated: boolean
  /** Email of the creator; null once the creator has been deleted. */
  createdBy: string | null
  createdAt: string
  lastUsedAt: string | null
  /** When the key stops working (it then answers `api_key_inactive`); null: never. */
  expiresAt: string | null
  /** The permissions the key is narrowed to; null: all of its creator's. */
  scopes: Permission[] | null
  /** The forms its `submissions:read` is narrowed to; null: every form. */
  forms: string[] | null
}

/** What is stored about a key and its owner that decides whether it works. */
export interface KeyState {
  revoked: boolean
  deactivated: boolean
  /** Null when the owner has been deleted. */
  owner: { disabled: boolean } | null
  expiresAt: string | null
}

/**
 * A key's status as the API answers it, and why, in the order `checkApiKey` decides: revoked or
 * ownerless keys are refused as invalid (`revoked`); deactivated keys, keys of disabled owners and
 * expired keys as inactive. Every face that lists keys shows this, so none shows a refused key as
 * active.
 */
export function keyStatus(
  key: KeyState,
  now = Date.now(),
): { status: KeyStatus; statusReason: string | null } {
  if (key.revoked) return { status: 'revoked', statusReason: null }
  if (key.owner === null) return { status: 'revoked', statusReason: 'owner deleted' }
  const reasons = [
    ...(key.deactivated ? ['deactivated'] : []),
    ...(key.owner.disabled ? ['owner disabled'] : []),
    ...(hasExpired(key, now) ? ['expired'] : []),
  ]
  return reasons.length === 0
    ? { status: 'active', statusReason: null }
    : { status: 'inactive', statusReason: reasons.join(', ') }
}

/** A creator's keys: all of them, and those that work now. */
export interface KeyCounts {
  active: number
  total: number
}

/** What key `id` may do now (see {@link findKeyAccess}). */
export interface KeyAccess {
  role: string | null
  permissions: Permission[]
  forms: { id: string; title: string | null }[] | null
}

/** A stored key as every face lists it. */
export function toKeyView(r: KeyViewRow): ApiKeyView {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    ...keyStatus({
      revoked: r.revoked_at !== null,
      deactivated: r.is_active !== 1,
      owner: r.email === null ? null : { disabled: r.is_disabled === 1 },
      expiresAt: r.expires_at,
    }),
    deactivated: r.revoked_at === null && r.is_active !== 1,
    createdBy: r.email,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
    ...scopeLists(readKeyScope(r.scopes, r.forms)),
  }
}

/** Every key, oldest first. */
export async function listApiKeys(db: Kysely<Database>): Promise<ApiKeyView[]> {
  return (await listKeyViewRows(db)).map(toKeyView)
}

/** One key by id, as the list shows it; a `NotFoundError` when there is none. */
export async function findApiKey(db: Kysely<Database>, id: string): Promise<ApiKeyView> {
  // No key has an id outside the id alphabet: answered without a query.
  if (!isSafeId(id)) throw new NotFoundError(`API key '${id}' not found`)
  const row = await findKeyViewRow(db, id)
  if (!row) throw new NotFoundError(`API key '${id}' not found`)
  return toKeyView(row)
}

/**
 * What key `id` may do now: its owner's role intersected with its scopes (none once the owner is
 * gone), and the forms its submissions are narrowed to, with their titles (null for a form deleted
 * since).
 */
export async function findKeyAccess(db: Kysely<Database>, id: string): Promise<KeyAccess> {
  if (!isSafeId(id)) throw new NotFoundError(`API key '${id}' not found`)
  const row = await findKeyAccessRow(db, id)
  if (!row) throw new NotFoundError(`API key '${id}' not found`)
  const scope = readKeyScope(row.scopes, row.forms)
  const permissions = row.role === null ? [] : effectivePermissions(row.role, scope)
  const ids = scopeLists(scope).forms
  if (ids === null) return { role: row.role, permissions, forms: null }
  const titles = await formTitles(db, ids)
  return {
    role: row.role,
    permissions,
    forms: ids.map((form) => ({ id: form, title: titles.get(form) ?? null })),
  }
}

/**
 * How many keys each creator holds (by email), and how many of those work now: counted from the
 * keys' statuses, so a disabled owner's keys are not counted as active.
 */
export async function countKeysByCreator(db: Kysely<Database>): Promise<Map<string, KeyCounts>> {
  const counts = new Map<string, KeyCounts>()
  for (const key of await listApiKeys(db)) {
    if (key.createdBy === null) continue
    const count = counts.get(key.createdBy) ?? { active: 0, total: 0 }
    count.total += 1
    if (key.status === 'active') count.active += 1
    counts.set(key.createdBy, count)
  }
  return counts
}
