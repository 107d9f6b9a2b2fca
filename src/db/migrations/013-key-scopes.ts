import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * Least-privilege keys and incremental reads of submissions.
 *
 * `api_keys.scopes` and `api_keys.forms` are JSON arrays (null: no narrowing) read with the key in
 * the one lookup of every request, so a scope costs no query of its own.
 *
 * The submissions filters `isRead` and `isStarred` get indexes with the flags before the order key,
 * one per combination, so a filtered page and its count read one contiguous range of an index in
 * order, with or without a `since`/`until` window. The partial indexes of migration 008 cannot
 * serve a statement whose flag is a bound value.
 */
const UP: FrozenStatements = {
  sqlite: [
    `alter table "api_keys" add column "scopes" text`,
    `alter table "api_keys" add column "forms" text`,
    `create index "submissions_form_read_order" on "submissions" ("form_id", "is_read", "created_at", "id")`,
    `create index "submissions_form_starred_order" on "submissions" ("form_id", "is_starred", "created_at", "id")`,
    `create index "submissions_form_read_starred_order" on "submissions" ("form_id", "is_read", "is_starred", "created_at", "id")`,
  ],
  postgres: [
    `alter table "api_keys" add column "scopes" text`,
    `alter table "api_keys" add column "forms" text`,
    `create index "submissions_form_read_order" on "submissions" ("form_id", "is_read", "created_at", "id")`,
    `create index "submissions_form_starred_order" on "submissions" ("form_id", "is_starred", "created_at", "id")`,
    `create index "submissions_form_read_starred_order" on "submissions" ("form_id", "is_read", "is_starred", "created_at", "id")`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [
    `drop index "submissions_form_read_starred_order"`,
    `drop index "submissions_form_starred_order"`,
    `drop index "submissions_form_read_order"`,
    `alter table "api_keys" drop column "forms"`,
    `alter table "api_keys" drop column "scopes"`,
  ],
  postgres: [
    `drop index "submissions_form_read_starred_order"`,
    `drop index "submissions_form_starred_order"`,
    `drop index "submissions_form_read_order"`,
    `alter table "api_keys" drop column "forms"`,
    `alter table "api_keys" drop column "scopes"`,
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
