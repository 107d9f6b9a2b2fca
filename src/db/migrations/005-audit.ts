import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * The audit log: who changed what, when. Entries are written in the same transaction as the change
 * they record, and read newest first (by the increasing id), optionally for one action or actor.
 * `detail` is JSON text and never holds a secret (no key, no password, no password hash).
 */
const UP: FrozenStatements = {
  sqlite: [
    `create table "audit_log" ("id" integer primary key autoincrement, "at" text collate binary not null, "actor" text collate binary not null, "action" text collate binary not null, "target" text collate binary not null, "detail" text)`,
    `create index "audit_log_time" on "audit_log" ("at")`,
    `create index "audit_log_action" on "audit_log" ("action", "id")`,
    `create index "audit_log_actor" on "audit_log" ("actor", "id")`,
  ],
  postgres: [
    `create table "audit_log" ("id" integer generated always as identity primary key, "at" text collate "C" not null, "actor" text collate "C" not null, "action" text collate "C" not null, "target" text collate "C" not null, "detail" text)`,
    `create index "audit_log_time" on "audit_log" ("at")`,
    `create index "audit_log_action" on "audit_log" ("action", "id")`,
    `create index "audit_log_actor" on "audit_log" ("actor", "id")`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [`drop table "audit_log"`],
  postgres: [`drop table "audit_log"`],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
