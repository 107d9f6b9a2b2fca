import type { Kysely } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Database } from './tables.js'

/**
 * The content version: one row, one column, moved by the database's own triggers on every write to
 * forms, submissions, pages and redirects (migration 003), whoever makes it. Anything derived from
 * content may be kept while the version it was read at is still the current one.
 */
export async function readContentVersion(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('content_version').select('version').where('id', '=', 1).executeTakeFirst()
  return Number(row?.version ?? 0)
}

/**
 * A bounded cache of values derived from content (counts, mostly), each kept while the content
 * version it was computed at is current: one cheap read of the version instead of, say, counting a
 * million submissions again. A value computed while a write commits is stored under the version read
 * before it, which the write has already moved on from, so it is never served as current.
 */
export function createContentCache<V extends NonNullable<unknown>>(db: Kysely<Database>, max = 1000) {
  const entries = new LRUCache<string, { version: number; value: V }>({ max })
  return {
    /** The current content version, to pass to `get` for several lookups made at once. */
    version: () => readContentVersion(db),

    /** The value of `key` at `version`, computed by `compute` when it is not kept for that version. */
    async get(key: string, version: number, compute: () => Promise<V>): Promise<V> {
      const kept = entries.get(key)
      if (kept && kept.version === version) return kept.value
      const value = await compute()
      entries.set(key, { version, value })
      return value
    },

    /** The value of `key` if kept for `version`. */
    peek: (key: string, version: number): V | undefined => {
      const kept = entries.get(key)
      return kept && kept.version === version ? kept.value : undefined
    },

    set: (key: string, version: number, value: V): void => {
      entries.set(key, { version, value })
    },
  }
}
