import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * Public intake of forms. `forms.intake` holds a form's intake settings as JSON text (null: the
 * defaults, intake off), so a settings change is a write to `forms` and moves the content version.
 *
 * Spam caught by the honeypot is kept in a table of its own rather than flagged among
 * submissions: every reader of `submissions` (the API's pages and totals, the unread counts, the
 * inbox, exports) then leaves it out without a filter any of them could forget, and the partial
 * indexes of the inbox stay as they are. Its `created_at` index serves the 30-day purge.
 *
 * The `retention` row of `locks` is a lease: the instance that moves its `acquired_at` forward
 * runs the retention purge, and no other does until the lease is an hour old.
 */
const UP: FrozenStatements = {
  sqlite: [
    `alter table "forms" add column "intake" text`,
    `create table "spam_submissions" ("id" text collate binary primary key, "form_id" text collate binary not null references "forms" ("id") on delete cascade, "data" text not null, "ip_address" text, "user_agent" text, "referrer" text, "created_at" text collate binary not null)`,
    `create index "spam_submissions_form_order" on "spam_submissions" ("form_id", "created_at", "id")`,
    `create index "spam_submissions_created_at" on "spam_submissions" ("created_at")`,
    `insert into locks (name) values ('retention')`,
  ],
  postgres: [
    `alter table "forms" add column "intake" text`,
    `create table "spam_submissions" ("id" text collate "C" primary key, "form_id" text collate "C" not null references "forms" ("id") on delete cascade, "data" text not null, "ip_address" text, "user_agent" text, "referrer" text, "created_at" text collate "C" not null)`,
    `create index "spam_submissions_form_order" on "spam_submissions" ("form_id", "created_at", "id")`,
    `create index "spam_submissions_created_at" on "spam_submissions" ("created_at")`,
    `insert into locks (name) values ('retention')`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [
    `delete from locks where name = 'retention'`,
    `drop table "spam_submissions"`,
    `alter table "forms" drop column "intake"`,
  ],
  postgres: [
    `delete from locks where name = 'retention'`,
    `drop table "spam_submissions"`,
    `alter table "forms" drop column "intake"`,
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
