import type { Kysely } from 'kysely'
import { readKindVersion } from '../../db/content-version.js'
import { activeRedirectsAfter } from '../../db/repositories/redirects.js'
import type { Database } from '../../db/tables.js'
import { createRedirectMatcher, type RedirectMatcher, type RedirectRule } from './matcher.js'

/** Active redirects read per query while building a matcher: bounded memory per round trip. */
const LOAD_BATCH = 5000

/**
 * The redirect matcher of the current content, for the faces that apply redirects (the dashboard's
 * "Try a URL", exports, `lectern redirects match`). Every write to redirects moves their version
 * (a trigger on the table, migration 010), so one tiny query tells whether the cached matcher still
 * holds; when it moved, the active redirects are read again in keyset batches and the matcher is
 * rebuilt once, however many callers ask at the same time.
 */
export function createRedirectApplier(db: Kysely<Database>, options: { batchSize?: number } = {}) {
  const batchSize = options.batchSize ?? LOAD_BATCH
  let cached: { version: number; matcher: RedirectMatcher } | undefined
  let building: { version: number; promise: Promise<RedirectMatcher> } | undefined

  const contentVersion = () => readKindVersion(db, 'redirects')

  /** Every active redirect, oldest first, read `batchSize` rows at a time along the active-order index. */
  async function* activeRedirects(): AsyncGenerator<RedirectRule> {
    let after: { created_at: string; id: string } | undefined
    for (;;) {
      const rows = await activeRedirectsAfter(db, after, batchSize)
      for (const row of rows) yield { fromPath: row.from_path, toPath: row.to_path, type: row.type }
      const last = rows.at(-1)
      if (rows.length < batchSize || last === undefined) return
      after = { created_at: last.created_at, id: last.id }
    }
  }

  /** Builds a matcher from the database as it is now (no cache). */
  const buildMatcher = async (): Promise<RedirectMatcher> => {
    const rules: RedirectRule[] = []
    for await (const rule of activeRedirects()) rules.push(rule)
    return createRedirectMatcher(rules)
  }

  return {
    contentVersion,
    activeRedirects,
    buildMatcher,

    /**
     * The matcher for the current content: the cached one while the redirects' version has not moved,
     * otherwise a new one. The version is read before the redirects, so a change made while they
     * load moves it again and the next call rebuilds: a matcher is never newer-labelled than its data.
     */
    async matcher(): Promise<RedirectMatcher> {
      const version = await contentVersion()
      if (cached?.version === version) return cached.matcher
      if (building?.version !== version) {
        const promise = buildMatcher()
        const attempt = { version, promise }
        building = attempt
        promise.then(
          (matcher) => {
            if (cached === undefined || cached.version < version) cached = { version, matcher }
            if (building === attempt) building = undefined
          },
          () => {
            if (building === attempt) building = undefined
          },
        )
      }
      return (building as { promise: Promise<RedirectMatcher> }).promise
    },
  }
}

export type RedirectApplier = ReturnType<typeof createRedirectApplier>
