import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * The submission inbox's filters: partial indexes holding only a form's unread and only its starred
 * submissions, in the inbox's (created_at, id) order, so "unread" and "starred" pages and the unread
 * count per form read just those rows however many read ones a form has. Both dialects support
 * partial indexes with the same syntax.
 */
const UP: FrozenStatements = {
  sqlite: [
    `create index "submissions_form_unread" on "submissions" ("form_id", "created_at", "id") where "is_read" = 0`,
    `create index "submissions_form_starred" on "submissions" ("form_id", "created_at", "id") where "is_starred" = 1`,
  ],
  postgres: [
    `create index "submissions_form_unread" on "submissions" ("form_id", "created_at", "id") where "is_read" = 0`,
    `create index "submissions_form_starred" on "submissions" ("form_id", "created_at", "id") where "is_starred" = 1`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [`drop index "submissions_form_starred"`, `drop index "submissions_form_unread"`],
  postgres: [`drop index "submissions_form_starred"`, `drop index "submissions_form_unread"`],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
