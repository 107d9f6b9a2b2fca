import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * Drops the partial indexes of migration 008. Since migration 013 every read of unread or starred
 * submissions binds its flag, which a partial index cannot serve, and reads the flag-first indexes
 * instead; the partial ones were only kept up to date. The unread one took a page of every new
 * submission: about one WAL page of the ten a post writes on SQLite, and one index insert on
 * PostgreSQL.
 */
const UP: FrozenStatements = {
  sqlite: [`drop index "submissions_form_starred"`, `drop index "submissions_form_unread"`],
  postgres: [`drop index "submissions_form_starred"`, `drop index "submissions_form_unread"`],
}

const DOWN: FrozenStatements = {
  sqlite: [
    `create index "submissions_form_unread" on "submissions" ("form_id", "created_at", "id") where "is_read" = 0`,
    `create index "submissions_form_starred" on "submissions" ("form_id", "created_at", "id") where "is_starred" = 1`,
  ],
  postgres: [
    `create index "submissions_form_unread" on "submissions" ("form_id", "created_at", "id") where "is_read" = 0`,
    `create index "submissions_form_starred" on "submissions" ("form_id", "created_at", "id") where "is_starred" = 1`,
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
