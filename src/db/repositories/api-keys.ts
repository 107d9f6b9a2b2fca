import type { Insertable, Kysely } from 'kysely'
import type { Executor } from '../executor.js'
import type { DatabaseHandle } from '../handle.js'
import { param } from '../prepared.js'
import type { ApiKeysTable, Database } from '../tables.js'

/**
 * The api_keys table's SQL, for the key service (`services/keys.ts`): the service keeps the rules,
 * the transactions and the audit entries, and hands its transaction to these functions.
 */

/** The columns of the read path's key lookup: the key, its creator, and the kinds' versions. */
function keyLookup(db: Kysely<Database>) {
  return db
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
    .where('api_keys.key_hash', '=', param('hash'))
}

/**
 * Prepares the read path's key lookup once: one statement returning the key, its creator's role
 * and the versions of forms, pages and redirects, by the key's hash. The returned function runs it.
 */
export function prepareKeyLookup(database: Pick<DatabaseHandle, 'db' | 'prepare'>) {
  const lookup = database.prepare(keyLookup(database.db))
  return (hash: string) => lookup({ hash })
}

/**
 * The same lookup for a request that reads one form's submissions, with that form's state (its
 * `form_submission_counts` row and whether the form exists) in the same statement: on PostgreSQL a
 * second statement is a second round trip on every request.
 */
export function prepareKeyAndFormLookup(database: Pick<DatabaseHandle, 'db' | 'prepare'>) {
  const lookup = database.prepare(
    keyLookup(database.db).select((eb) => {
      const counts = () => eb.selectFrom('form_submission_counts').where('form_id', '=', param('formId'))
      return [
        counts().select('version').as('form_version'),
        counts().select('total').as('form_total'),
        counts().select('unread').as('form_unread'),
        eb.selectFrom('forms').select('id').where('id', '=', param('formId')).as('form_present'),
      ]
    }),
  )
  return (hash: string, formId: string) => lookup({ hash, formId })
}

/** A row of the lookup with a form's state (see {@link prepareKeyAndFormLookup}). */
export type KeyAndFormLookupRow = Awaited<ReturnType<ReturnType<typeof prepareKeyAndFormLookup>>>[number]

/** A row of the read path's key lookup (see {@link prepareKeyLookup}). */
export type KeyLookupRow = Awaited<ReturnType<ReturnType<typeof prepareKeyLookup>>>[number]

/**
 * Marks key `id`'s expiry as recorded, unless it already is: true for the one caller, on any
 * instance, whose update won.
 */
export async function markKeyExpiryRecorded(trx: Executor, id: string, at: string): Promise<boolean> {
  const result = await trx
    .updateTable('api_keys')
    .set({ expiry_recorded_at: at })
    .where('id', '=', id)
    .where('expiry_recorded_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Records that key `id` was used at `at`. */
export async function touchKeyLastUsed(db: Executor, id: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute()
}

/** Key `id`'s name and revocation time, if there is such a key. */
export function findKeyById(db: Executor, id: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'revoked_at'])
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The columns a key is listed with: the key's own and its creator's email and disabled flag. */
function keyViewRows(db: Executor) {
  return db
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
}

/** A key as it is listed (see {@link listKeyViewRows}). */
export type KeyViewRow = Awaited<ReturnType<ReturnType<typeof keyViewRows>['executeTakeFirstOrThrow']>>

/** Every key as it is listed, oldest first. */
export function listKeyViewRows(db: Executor): Promise<KeyViewRow[]> {
  return keyViewRows(db).orderBy('api_keys.created_at').orderBy('api_keys.id').execute()
}

/** Key `id` as it is listed, if there is such a key. */
export function findKeyViewRow(db: Executor, id: string): Promise<KeyViewRow | undefined> {
  return keyViewRows(db).where('api_keys.id', '=', id).executeTakeFirst()
}

/** Key `id`'s scopes and forms, with its creator's role (null once the creator is deleted). */
export function findKeyAccessRow(db: Executor, id: string) {
  return db
    .selectFrom('api_keys')
    .leftJoin('users', 'users.id', 'api_keys.created_by')
    .select(['users.role', 'api_keys.scopes', 'api_keys.forms'])
    .where('api_keys.id', '=', id)
    .executeTakeFirst()
}

export async function insertApiKey(trx: Executor, row: Insertable<ApiKeysTable>): Promise<void> {
  await trx.insertInto('api_keys').values(row).execute()
}

export async function setKeyActive(trx: Executor, id: string, active: boolean): Promise<void> {
  await trx
    .updateTable('api_keys')
    .set({ is_active: active ? 1 : 0 })
    .where('id', '=', id)
    .execute()
}

export async function renameKey(trx: Executor, id: string, name: string): Promise<void> {
  await trx.updateTable('api_keys').set({ name }).where('id', '=', id).execute()
}

/** Revokes key `id` at `at` unless it already is revoked: true when this call revoked it. */
export async function revokeKey(trx: Executor, id: string, at: string): Promise<boolean> {
  const result = await trx
    .updateTable('api_keys')
    .set({ revoked_at: at, is_active: 0 })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Revokes, at `at`, every key `userId` created that is not revoked yet; returns how many. */
export async function revokeKeysCreatedBy(trx: Executor, userId: string, at: string): Promise<number> {
  const result = await trx
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('created_by', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
