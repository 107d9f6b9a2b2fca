import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * An index on `redirects.to_path`, so that the redirects leading to a path are found by lookup:
 * saving one redirect reports the chains it joins without reading every redirect.
 */
const UP: FrozenStatements = {
  sqlite: [`create index "redirects_destination" on "redirects" ("to_path")`],
  postgres: [`create index "redirects_destination" on "redirects" ("to_path")`],
}

const DOWN: FrozenStatements = {
  sqlite: [`drop index "redirects_destination"`],
  postgres: [`drop index "redirects_destination"`],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
