import { secretsMatch } from '../../constant-time.js'
import { type FormState, formState } from '../../db/content-version.js'
import type { DatabaseHandle } from '../../db/database.js'
import {
  type KeyAndFormLookupRow,
  markKeyExpiryRecorded,
  prepareKeyAndFormLookup,
  prepareKeyLookup,
  touchKeyLastUsed,
} from '../../db/repositories/api-keys.js'
import type { ContentKind } from '../../db/tables.js'
import { formatTimestamp, now } from '../../time.js'
import { recordAudit } from '../audit.js'
import { sharedFreshLookups } from '../coalesced-lookups.js'
import { hashApiKey, hasKeyShape } from '../key-format.js'
import { type KeyScope, readKeyScope } from '../key-scopes.js'

/** `lastUsedAt` is written at most this often per key, so reads do not become writes. */
const LAST_USED_RESOLUTION_MS = 60_000

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
      /** The state of the form the request named (`formId`), read in the same statement. */
      form?: FormState
    }
  | { status: 'invalid' }
  | { status: 'inactive' }
  /** Active, but past its expiry time: refused as inactive, with a message saying when it expired. */
  | { status: 'expired'; expiresAt: string }

/**
 * The read path's key check. There is deliberately no cache in front of it: every request waits
 * for a read of its key that started after it arrived, which is what makes a revoke from any
 * process effective on the next request. Requests of one key arriving together share that read.
 */
export function createKeyChecker(database: Pick<DatabaseHandle, 'db' | 'prepare'>) {
  const db = database.db
  // One prepared statement per request, returning the key, its creator's role and the versions of
  // forms, pages and redirects together. The row's hash is compared with the one looked up, in
  // constant time, once per lookup: every request sharing a lookup presented that hash.
  const lookupKey = prepareKeyLookup(database)
  // Requests with one key in the same turn of the event loop, or arriving while its lookup runs,
  // share the next lookup, never one that started before they arrived.
  const lookupKeyFresh = sharedFreshLookups(async (hash: string) => matching(await lookupKey(hash), hash))
  // With a form's state: shared only by requests of the same key for the same form.
  const lookupKeyAndForm = prepareKeyAndFormLookup(database)
  const lookupKeyAndFormFresh = sharedFreshLookups(async (both: string) => {
    const [hash = '', formId = ''] = both.split('\n')
    return matching(await lookupKeyAndForm(hash, formId), hash)
  })
  // A key's `last_used_at` changes once a minute at most: the time read last is parsed once.
  let lastUsedText = ''
  let lastUsedMs = 0
  const lastUsed = (text: string): number => {
    if (text !== lastUsedText) {
      lastUsedText = text
      lastUsedMs = Date.parse(text)
    }
    return lastUsedMs
  }
  /** Audits `key.expired` on the first use after expiry: the guarded update lets one request, on any instance, win. */
  const recordExpiry = (id: string) =>
    db.transaction().execute(async (trx) => {
      if (await markKeyExpiryRecorded(trx, id, now()))
        await recordAudit(trx, { actor: 'system', action: 'key.expired', target: id })
    })

  /**
   * Decides what a presented key is worth right now: unknown, revoked or orphaned keys are
   * invalid; deactivated keys and keys of disabled users are inactive. `keyHash` is
   * `hashApiKey(plainKey)`, for a caller that has already computed it. With `formId` (an id of the
   * id alphabet, no line break), the state of that form is read in the same statement.
   */
  return async (plainKey: string, keyHash = hashApiKey(plainKey), formId?: string): Promise<KeyCheck> => {
    if (!hasKeyShape(plainKey)) return { status: 'invalid' }
    const [row] = await (formId === undefined
      ? lookupKeyFresh(keyHash)
      : lookupKeyAndFormFresh(`${keyHash}\n${formId}`))
    if (!row) return { status: 'invalid' }
    if (row.revoked_at !== null || row.role === null) return { status: 'invalid' }
    if (row.is_active !== 1 || row.is_disabled === 1) return { status: 'inactive' }
    const current = Date.now()
    if (row.expires_at !== null && Date.parse(row.expires_at) <= current) {
      if (row.expiry_recorded_at === null) await recordExpiry(row.id)
      return { status: 'expired', expiresAt: row.expires_at }
    }
    if (row.last_used_at === null || current - lastUsed(row.last_used_at) >= LAST_USED_RESOLUTION_MS)
      await touchKeyLastUsed(db, row.id, formatTimestamp(new Date(current)))
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
      form: formId === undefined ? undefined : formOf(row),
    }
  }
}

/** The rows whose hash is `keyHash`, compared in constant time (the lookup already matched it by index). */
function matching<Row extends { key_hash: string }>(rows: Row[], keyHash: string): Row[] {
  return rows.filter((row) => secretsMatch(row.key_hash, keyHash))
}

/** The form's state read with the key; a form without its counts row reads as absent, as alone. */
function formOf(row: Partial<KeyAndFormLookupRow>): FormState {
  if (row.form_version === null || row.form_version === undefined) return formState(undefined)
  return formState({
    version: row.form_version,
    total: row.form_total ?? 0,
    unread: row.form_unread ?? 0,
    present: row.form_present ?? null,
  })
}
