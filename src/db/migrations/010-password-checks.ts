import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * The current-password checks of signed-in users that failed recently, which throttle those checks
 * as `login_attempts` throttles sign-ins: by session (a session that fails too often is ended) and
 * by user (every check of a user who failed too often is slowed). `session_id` is kept without a
 * reference, so that ending a session does not forget its failures.
 */
const UP: FrozenStatements = {
  sqlite: [
    `create table "password_checks" ("id" text collate binary primary key, "user_id" text collate binary not null references "users" ("id") on delete cascade, "session_id" text collate binary not null, "checked_at" text collate binary not null)`,
    `create index "password_checks_user" on "password_checks" ("user_id", "checked_at")`,
    `create index "password_checks_session" on "password_checks" ("session_id", "checked_at")`,
    `create index "password_checks_time" on "password_checks" ("checked_at")`,
  ],
  postgres: [
    `create table "password_checks" ("id" text collate "C" primary key, "user_id" text collate "C" not null references "users" ("id") on delete cascade, "session_id" text collate "C" not null, "checked_at" text collate "C" not null)`,
    `create index "password_checks_user" on "password_checks" ("user_id", "checked_at")`,
    `create index "password_checks_session" on "password_checks" ("session_id", "checked_at")`,
    `create index "password_checks_time" on "password_checks" ("checked_at")`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [`drop table "password_checks"`],
  postgres: [`drop table "password_checks"`],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
