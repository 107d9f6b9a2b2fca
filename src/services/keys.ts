import { timingSafeEqual } from 'node:crypto'
import type { DatabaseHandle } from '../db/database.js'
import { param } from '../db/prepared.js'
import type { ContentKind } from '../db/tables.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { isSafeId, newId } from '../ids.js'
import { characterProblem, FIELD_LIMITS } from '../limits.js'
import { formatTimestamp, now, parseTimestamp } from '../time.js'
import { type Actor, recordAudit } from './audit.js'
import { sharedFreshLookups } from './coalesced-lookups.js'
import { hasExpired, hashApiKey, hasKeyShape, keyDisplayPrefix, newPlainKey } from './key-format.js'
import { effectivePermissions, type KeyScope, MAX_KEY_FORMS, readKeyScope, scopeLists } from './key-scopes.js'
import { isPermission, PERMISSIONS, type Permission, roleAllows } from './roles.js'
import { normalizeEmail } from './users.js'

export { hasExpired, hashApiKey, KEY_PREFIX, keyDisplayPrefix } from './key-format.js'

/** `lastUsedAt` is written at most this often per key, so reads do not become writes. */
const LAST_USED_RESOLUTION_MS = 60_000

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

/** The version of each kind of content, as read with a key (see migration 010). */
export type KindVersions = Record<ContentKind, number>

/** The outcome of presenting a key, decided from the database on every request. */
export type KeyCheck =
  | {
      status: 'valid'
      keyId: string
      role: string
      /** What the key is narrowed to, read in the same statement. */
      scope: KeyScope
      /**
       * The versions of forms, pages and redirects read in the same statement, to validate cached
       * responses against (a form's submissions have a version of their own, read per form).
       */
      versions: KindVersions
    }
  | { status: 'invalid' }
  | { status: 'inactive' }
  /** Active, but past its expiry time: refused as inactive, with a message saying when it expired. */
  | { status: 'expired'; expiresAt: string }

/**
 * API keys: created once and shown once, stored as a SHA-256 hash plus a display prefix.
 * There is deliberately no cache in front of `checkApiKey`: every request waits for a read of its
 * key that started after it arrived, which is what makes a revoke from any process effective on
 * the next request. Requests of one key arriving together share that read (`sharedFreshLookups`).
 */
export function createKeyService(database: DatabaseHandle) {
  const db = database.db
  // The hot path: one prepared statement per request, returning the key, its creator's role and the
  // versions of forms, pages and redirects together.
  const lookupKey = database.prepare(
    db
      .selectFrom('api_keys')
      .leftJoin('users', 'users.id', 'api_keys.created_by')
      .select((eb) => [
        'api_keys.id',
        'api_keys.key_hash',
        'api_keys.is_active',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
        'api_keys.expires_at',
        'api_keys.expiry_recorded_at',
        'api_keys.scopes',
        'api_keys.forms',
        'users.role',
        'users.is_disabled',
        eb.selectFrom('content_versions').select('version').where('kind', '=', 'forms').as('forms_version'),
        eb.selectFrom('content_versions').select('version').where('kind', '=', 'pages').as('pages_version'),
        eb
          .selectFrom('content_versions')
          .select('version')
          .where('kind', '=', 'redirects')
          .as('redirects_version'),
      ])
      .where('api_keys.key_hash', '=', param('hash')),
  )
  // Requests with one key in the same turn of the event loop, or arriving while its lookup runs,
  // share the next lookup, never one that started before they arrived.
  const lookupKeyFresh = sharedFreshLookups((hash: string) => lookupKey({ hash }))
  /** Audits `key.expired` on the first use after expiry: the guarded update lets one request, on any instance, win. */
  const recordExpiry = (id: string) =>
    db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('api_keys')
        .set({ expiry_recorded_at: now() })
        .where('id', '=', id)
        .where('expiry_recorded_at', 'is', null)
        .executeTakeFirst()
      if (result.numUpdatedRows > 0n)
        await recordAudit(trx, { actor: 'system', action: 'key.expired', target: id })
    })

  const findKey = async (id: string) => {
    // No key has an id outside the id alphabet: answered without a query.
    if (!isSafeId(id)) throw new NotFoundError(`API key '${id}' not found`)
    const row = await db
      .selectFrom('api_keys')
      .select(['id', 'name', 'revoked_at'])
      .where('id', '=', id)
      .executeTakeFirst()
    if (!row) throw new NotFoundError(`API key '${id}' not found`)
    return row
  }

  const setActive = async (id: string, active: boolean, actor: Actor) => {
    const row = await findKey(id)
    if (row.revoked_at !== null) {
      throw new ValidationError(
        `API key '${id}' is revoked; a revoked key cannot be ${active ? 'activated' : 'deactivated'}`,
      )
    }
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable('api_keys')
        .set({ is_active: active ? 1 : 0 })
        .where('id', '=', id)
        .execute()
      await recordAudit(trx, {
        actor,
        action: active ? 'key.activated' : 'key.deactivated',
        target: id,
        detail: { name: row.name },
      })
    })
  }

  const keyViews = () =>
    db
      .selectFrom('api_keys')
      .leftJoin('users', 'users.id', 'api_keys.created_by')
      .select([
        'api_keys.id',
        'api_keys.name',
        'api_keys.prefix',
        'api_keys.is_active',
        'api_keys.revoked_at',
        'api_keys.created_at',
        'api_keys.last_used_at',
        'api_keys.expires_at',
        'api_keys.scopes',
        'api_keys.forms',
        'users.email',
        'users.is_disabled',
      ])
  const toKeyView = (
    r: Awaited<ReturnType<ReturnType<typeof keyViews>['executeTakeFirstOrThrow']>>,
  ): ApiKeyView => ({
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
  })

  /** A key's name, trimmed, or a `ValidationError` saying what is wrong with it. */
  const checkName = (value: string) => {
    const name = value.trim()
    if (name.length === 0 || name.length > FIELD_LIMITS.keyName)
      throw new ValidationError(`Key name must be 1 to ${FIELD_LIMITS.keyName} characters`)
    const characters = characterProblem(name)
    if (characters !== null) throw new ValidationError(`Key name ${characters}`)
    return name
  }

  /** An expiry as given (any ISO 8601 date-time, or a date: its start, UTC), which must be in the future. */
  const checkExpiry = (value: string | undefined): string | null => {
    if (value === undefined || value.trim() === '') return null
    const expiresAt = value.length <= 64 ? parseTimestamp(value.trim()) : null
    if (expiresAt === null)
      throw new ValidationError(
        `Expiry '${value.slice(0, 64)}' is not an ISO 8601 date-time (e.g. 2030-01-31T00:00:00Z)`,
      )
    if (Date.parse(expiresAt) <= Date.now())
      throw new ValidationError(`Expiry ${expiresAt} is in the past: a key must expire in the future`)
    return expiresAt
  }

  /**
   * The scopes asked for, checked against the creator's role: a key is created with no more than
   * its creator may do (least privilege), so a scope the role lacks is refused rather than kept
   * dormant. Undefined: no narrowing.
   */
  const checkScopes = (values: readonly string[] | undefined, role: string): Permission[] | null => {
    if (values === undefined) return null
    const asked = new Set(values.map((value) => value.trim()).filter((value) => value !== ''))
    if (asked.size === 0)
      throw new ValidationError(`Give at least one scope (of ${PERMISSIONS.join(', ')}), or none for all`)
    for (const value of asked) {
      if (!isPermission(value))
        throw new ValidationError(
          `Unknown scope '${value.slice(0, 64)}': scopes are ${PERMISSIONS.join(', ')}`,
        )
      if (!roleAllows(role, value))
        throw new ValidationError(
          `Scope '${value}' is not a permission of the key's owner (${role}): a key cannot do more than its owner`,
        )
    }
    return PERMISSIONS.filter((permission) => asked.has(permission))
  }

  /**
   * The forms asked for: each must exist, and the key must be able to read submissions, or the
   * narrowing would grant nothing. Undefined: every form.
   */
  const checkForms = async (
    values: readonly string[] | undefined,
    scopes: Permission[] | null,
    role: string,
  ): Promise<string[] | null> => {
    if (values === undefined) return null
    const ids = [...new Set(values.map((value) => value.trim()).filter((value) => value !== ''))]
    if (ids.length === 0) throw new ValidationError('Give at least one form id, or none for every form')
    if (ids.length > MAX_KEY_FORMS)
      throw new ValidationError(
        `A key can be narrowed to at most ${MAX_KEY_FORMS} forms; ${ids.length} given`,
      )
    if (!roleAllows(role, 'submissions:read') || (scopes !== null && !scopes.includes('submissions:read')))
      throw new ValidationError(
        "Forms narrow only the 'submissions:read' permission, which this key would not have: add the scope submissions:read or leave the forms out",
      )
    const safe = ids.filter(isSafeId)
    const found = new Set(
      safe.length === 0
        ? []
        : (await db.selectFrom('forms').select('id').where('id', 'in', safe).execute()).map((row) => row.id),
    )
    const unknown = ids.filter((id) => !found.has(id))
    if (unknown.length > 0)
      throw new ValidationError(
        `Unknown form${unknown.length > 1 ? 's' : ''} ${unknown
          .slice(0, 5)
          .map((id) => `'${id.slice(0, 64)}'`)
          .join(', ')}${unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''}`,
      )
    return ids
  }

  /** The global admin a new key will belong to: the one named, or the only one there is. */
  const findKeyOwner = async (userEmail: string | undefined) => {
    if (userEmail !== undefined) {
      const email = normalizeEmail(userEmail)
      const user = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst()
      if (!user) throw new NotFoundError(`User '${userEmail}' not found`)
      if (user.role !== 'global_admin')
        throw new ValidationError(`Only a global admin can create API keys; '${email}' is ${user.role}`)
      if (user.is_disabled === 1) throw new ValidationError(`User '${email}' is disabled`)
      return user
    }
    const admins = await db
      .selectFrom('users')
      .selectAll()
      .where('role', '=', 'global_admin')
      .where('is_disabled', '=', 0)
      .limit(2)
      .execute()
    if (admins.length === 0)
      throw new NotFoundError('No global admin exists: create one first with `users create`')
    if (admins.length > 1)
      throw new ValidationError('Several global admins exist: name the key owner with --user')
    return admins[0]
  }

  return {
    /**
     * Creates a key for a global admin. `userEmail` may be omitted when exactly one enabled global
     * admin exists. Returns the plain key, which is not stored and cannot be shown again. The audit
     * entry (`key.created`, by `actor`) is written in the same transaction. `expiresAt` (any ISO
     * 8601 date-time in the future) makes the key stop working then. `scopes` narrows the key to
     * some of its owner's permissions and `forms` its `submissions:read` to some forms (both
     * checked, see `checkScopes` and `checkForms`; undefined: no narrowing).
     */
    async createApiKey(
      input: {
        name: string
        userEmail?: string
        expiresAt?: string
        scopes?: readonly string[]
        forms?: readonly string[]
      },
      actor: Actor = 'cli',
    ) {
      const name = checkName(input.name)
      const expiresAt = checkExpiry(input.expiresAt)
      const creator = await findKeyOwner(input.userEmail)
      const scopes = checkScopes(input.scopes, creator.role)
      const forms = await checkForms(input.forms, scopes, creator.role)
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
        await trx.insertInto('api_keys').values(row).execute()
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
    },

    listApiKeys: async (): Promise<ApiKeyView[]> =>
      (await keyViews().orderBy('api_keys.created_at').orderBy('api_keys.id').execute()).map(toKeyView),

    /** One key by id, as the list shows it; a `NotFoundError` when there is none. */
    findApiKey: async (id: string): Promise<ApiKeyView> => {
      if (!isSafeId(id)) throw new NotFoundError(`API key '${id}' not found`)
      const row = await keyViews().where('api_keys.id', '=', id).executeTakeFirst()
      if (!row) throw new NotFoundError(`API key '${id}' not found`)
      return toKeyView(row)
    },

    /**
     * What key `id` may do now: its owner's role intersected with its scopes (none once the owner
     * is gone), and the forms its submissions are narrowed to, with their titles (null for a form
     * deleted since).
     */
    findKeyAccess: async (
      id: string,
    ): Promise<{
      role: string | null
      permissions: Permission[]
      forms: { id: string; title: string | null }[] | null
    }> => {
      if (!isSafeId(id)) throw new NotFoundError(`API key '${id}' not found`)
      const row = await db
        .selectFrom('api_keys')
        .leftJoin('users', 'users.id', 'api_keys.created_by')
        .select(['users.role', 'api_keys.scopes', 'api_keys.forms'])
        .where('api_keys.id', '=', id)
        .executeTakeFirst()
      if (!row) throw new NotFoundError(`API key '${id}' not found`)
      const scope = readKeyScope(row.scopes, row.forms)
      const permissions = row.role === null ? [] : effectivePermissions(row.role, scope)
      const ids = scopeLists(scope).forms
      if (ids === null) return { role: row.role, permissions, forms: null }
      const titles = new Map(
        (await db.selectFrom('forms').select(['id', 'title']).where('id', 'in', ids).execute()).map(
          (form) => [form.id, form.title],
        ),
      )
      return {
        role: row.role,
        permissions,
        forms: ids.map((form) => ({ id: form, title: titles.get(form) ?? null })),
      }
    },

    /** The forms a new key may be narrowed to, by title, for the dashboard's picker. */
    formChoices: () =>
      db.selectFrom('forms').select(['id', 'title']).orderBy('title').orderBy('id').limit(1000).execute(),

    /**
     * How many keys each creator holds (by email), and how many of those work now: counted from
     * the keys' statuses, so a disabled owner's keys are not counted as active.
     */
    countKeysByCreator: async (): Promise<Map<string, KeyCounts>> => {
      const counts = new Map<string, KeyCounts>()
      for (const key of (await keyViews().execute()).map(toKeyView)) {
        if (key.createdBy === null) continue
        const count = counts.get(key.createdBy) ?? { active: 0, total: 0 }
        count.total += 1
        if (key.status === 'active') count.active += 1
        counts.set(key.createdBy, count)
      }
      return counts
    },

    /** Gives a key a new name (revoked keys too: the name is only a label); audited as `key.renamed`. */
    renameApiKey: async (id: string, newName: string, actor: Actor = 'cli'): Promise<ApiKeyView> => {
      const name = checkName(newName)
      const row = await findKey(id)
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('api_keys').set({ name }).where('id', '=', id).execute()
        if (row.name !== name)
          await recordAudit(trx, {
            actor,
            action: 'key.renamed',
            target: id,
            detail: { from: row.name, to: name },
          })
      })
      const renamed = await keyViews().where('api_keys.id', '=', id).executeTakeFirstOrThrow()
      return toKeyView(renamed)
    },

    deactivateApiKey: (id: string, actor: Actor = 'cli') => setActive(id, false, actor),
    activateApiKey: (id: string, actor: Actor = 'cli') => setActive(id, true, actor),

    /**
     * Revokes a key for good. Revoking twice is harmless and keeps the first revocation time; only
     * the first revocation is audited.
     */
    revokeApiKey: async (id: string, actor: Actor = 'cli') => {
      const row = await findKey(id)
      await db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('api_keys')
          .set({ revoked_at: now(), is_active: 0 })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst()
        if (result.numUpdatedRows > 0n)
          await recordAudit(trx, { actor, action: 'key.revoked', target: id, detail: { name: row.name } })
      })
    },

    /**
     * Decides what a presented key is worth right now: unknown, revoked or orphaned keys are
     * invalid; deactivated keys and keys of disabled users are inactive. `keyHash` is
     * `hashApiKey(plainKey)`, for a caller that has already computed it.
     */
    checkApiKey: async (plainKey: string, keyHash = hashApiKey(plainKey)): Promise<KeyCheck> => {
      if (!hasKeyShape(plainKey)) return { status: 'invalid' }
      const [row] = await lookupKeyFresh(keyHash)
      if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(keyHash)))
        return { status: 'invalid' }
      if (row.revoked_at !== null || row.role === null) return { status: 'invalid' }
      if (row.is_active !== 1 || row.is_disabled === 1) return { status: 'inactive' }
      const current = Date.now()
      if (row.expires_at !== null && Date.parse(row.expires_at) <= current) {
        if (row.expiry_recorded_at === null) await recordExpiry(row.id)
        return { status: 'expired', expiresAt: row.expires_at }
      }
      if (row.last_used_at === null || current - Date.parse(row.last_used_at) >= LAST_USED_RESOLUTION_MS) {
        await db
          .updateTable('api_keys')
          .set({ last_used_at: formatTimestamp(new Date(current)) })
          .where('id', '=', row.id)
          .execute()
      }
      return {
        status: 'valid',
        keyId: row.id,
        role: row.role,
        scope: readKeyScope(row.scopes, row.forms),
        versions: {
          forms: Number(row.forms_version),
          pages: Number(row.pages_version),
          redirects: Number(row.redirects_version),
        },
      }
    },
  }
}

export type KeyService = ReturnType<typeof createKeyService>
