import type { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/tables.js'
import type { RedirectInput } from '../../resources/redirect.js'
import type { Actor } from '../audit.js'
import { createChainReports } from './chains.js'
import { redirectsCsv } from './csv.js'
import { flattenChains } from './flatten.js'
import { importRedirectsCsv } from './imports.js'
import {
  deleteRedirect,
  getRedirect,
  getRedirectForEditing,
  setRedirectActive,
  writeRedirect,
} from './writes.js'

export type { RedirectField, RedirectInput } from '../../resources/redirect.js'
export { describeChain, LISTED_CHAINS, type RedirectChainsReport } from './chains.js'
export { CSV_COLUMNS } from './csv.js'
export type { RedirectFlatteningResult } from './flatten.js'
export type { RedirectImportResult } from './imports.js'
export type { RedirectChange } from './writes.js'

/**
 * Creating, changing and removing redirects under the redirect rules: paths that cannot be an
 * open redirect (stored percent-decoded), unique `fromPath`, no loops (checked across all
 * redirects, active or not, so that activating one later cannot close a loop), and chains reported
 * so they can be flattened.
 *
 * Nothing here reads every redirect to change one: a change walks from its destination by indexed
 * lookups (`routes.ts`). What needs every redirect (the chain report, a CSV import, flattening)
 * reads them in keyed batches with turns of the event loop between, so a million redirects never
 * stall the server; the chain report is cached per content version (`chains.ts`).
 *
 * Writers take the `redirects` lock (`transactions.ts`). Every write to redirects goes through
 * this folder (see `content-admin.ts`), bulk imports aside; the SQL is in
 * `db/repositories/redirects.ts`.
 */
export function createRedirectService(db: Kysely<Database>) {
  const { findChains } = createChainReports(db)
  return {
    getRedirect: (id: string) => getRedirect(db, id),
    getRedirectForEditing: (id: string) => getRedirectForEditing(db, id),
    /** Creates a redirect; a `ValidationError` says what is wrong with it (path, duplicate, loop). */
    createRedirect: (input: RedirectInput, actor: Actor = 'cli') =>
      writeRedirect(db, undefined, input, actor),
    /** Replaces a redirect's paths, type and active flag, under the same rules as creating one. */
    updateRedirect: (id: string, input: RedirectInput, actor: Actor = 'cli') =>
      writeRedirect(db, id, input, actor),
    setRedirectActive: (id: string, active: boolean, actor: Actor = 'cli') =>
      setRedirectActive(db, id, active, actor),
    deleteRedirect: (id: string, actor: Actor = 'cli') => deleteRedirect(db, id, actor),
    findChains,
    flattenChains: (actor: Actor = 'cli') => flattenChains(db, actor),
    exportCsv: (): Readable => redirectsCsv(db),
    importCsv: (text: string, actor: Actor = 'cli') => importRedirectsCsv(db, text, actor),
  }
}

export type RedirectService = ReturnType<typeof createRedirectService>
