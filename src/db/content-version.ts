import type { Kysely } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { ContentKind, Database } from './tables.js'

/**
 * Content versions (migration 010): one per kind (forms, pages, redirects) and one per form for its
 * submissions, each moved by the database's own triggers in the transaction of every write to what
 * it covers, whoever makes it. Anything derived from some content may be kept while the version
 * that covers that content, read after the request arrived, is still the one it was built at:
 * versions only grow, so an equal version means no write to that content has committed since.
 */
export type { ContentKind }

/** The current version of one kind of content. */
export async function readKindVersion(db: Kysely<Database>, kind: ContentKind): Promise<number> {
  const row = await db
    .selectFrom('content_versions')
    .select('version')
    .where('kind', '=', kind)
    .executeTakeFirst()
  return Number(row?.version ?? 0)
}

/** The current version of every kind of content, as stored (PostgreSQL's bigint as a string). */
export function readKindVersions(
  db: Kysely<Database>,
): Promise<{ kind: ContentKind; version: number | string }[]> {
  return db.selectFrom('content_versions').select(['kind', 'version']).execute()
}

/** What the database keeps about one form's submissions: their version, total and unread count. */
export interface FormState {
  /** Whether the form exists now. */
  exists: boolean
  /** The version of the form's submissions (0 for a form that never existed). */
  version: number
  total: number
  unread: number
}

/** The state of each of `ids` (forms that never existed read as absent with version 0). */
export async function readFormStates(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<Map<string, FormState>> {
  const states = new Map<string, FormState>()
  if (ids.length === 0) return states
  const rows = await db
    .selectFrom('form_submission_counts')
    .leftJoin('forms', 'forms.id', 'form_submission_counts.form_id')
    .select([
      'form_submission_counts.form_id',
      'form_submission_counts.version',
      'form_submission_counts.total',
      'form_submission_counts.unread',
      'forms.id as present',
    ])
    .where('form_submission_counts.form_id', 'in', [...ids])
    .execute()
  for (const row of rows) states.set(row.form_id, formState(row))
  for (const id of ids) if (!states.has(id)) states.set(id, ABSENT)
  return states
}

const ABSENT: FormState = Object.freeze({ exists: false, version: 0, total: 0, unread: 0 })

/** A `form_submission_counts` row (joined to its form's id, null when deleted) as a `FormState`. */
export function formState(
  row:
    | { version: number | string; total: number | string; unread: number | string; present: string | null }
    | undefined,
): FormState {
  if (row === undefined) return ABSENT
  return {
    exists: row.present !== null,
    version: Number(row.version),
    total: Number(row.total),
    unread: Number(row.unread),
  }
}

/** The version of the submissions of `formId` (see `FormState.version`). */
export async function readFormVersion(db: Kysely<Database>, formId: string): Promise<number> {
  return (await readFormStates(db, [formId])).get(formId)?.version ?? 0
}

/**
 * A bounded cache of values derived from content, each kept while the version it was computed at
 * is current: one cheap read of a version instead of, say, counting a million rows again. Each
 * lookup names the version that covers its value. A value computed while a write commits is stored
 * under the version read before it, which the write has already moved on from, so it is never
 * served as current.
 */
export function createContentCache<V extends NonNullable<unknown>>(max = 1000) {
  const entries = new LRUCache<string, { version: number; value: V }>({ max })
  return {
    /** The value of `key` at `version`, computed by `compute` when it is not kept for that version. */
    async get(key: string, version: number, compute: () => Promise<V>): Promise<V> {
      const kept = entries.get(key)
      if (kept && kept.version === version) return kept.value
      const value = await compute()
      entries.set(key, { version, value })
      return value
    },
  }
}
