import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * What the admin dashboard needs: server-side sessions, the failed sign-ins that throttle logins
 * (kept in the database so every instance counts the same attempts), and the rows writers lock to
 * serialize changes that must see each other (the first admin, redirect loop checks).
 */
const UP: FrozenStatements = {
  sqlite: [
    `create table "admin_sessions" ("id" text collate binary primary key, "user_id" text collate binary not null references "users" ("id") on delete cascade, "csrf_token" text not null, "flash" text, "created_at" text collate binary not null, "last_seen_at" text collate binary not null)`,
    `create index "admin_sessions_user" on "admin_sessions" ("user_id")`,
    `create index "admin_sessions_last_seen" on "admin_sessions" ("last_seen_at")`,
    `create table "login_attempts" ("id" text collate binary primary key, "email" text collate binary not null, "ip_address" text collate binary not null, "attempted_at" text collate binary not null)`,
    `create index "login_attempts_email" on "login_attempts" ("email", "attempted_at")`,
    `create index "login_attempts_ip" on "login_attempts" ("ip_address", "attempted_at")`,
    `create index "login_attempts_time" on "login_attempts" ("attempted_at")`,
    `create table "locks" ("name" text collate binary primary key, "acquired_at" text)`,
    `insert into locks (name) values ('setup')`,
    `insert into locks (name) values ('redirects')`,
  ],
  postgres: [
    `create table "admin_sessions" ("id" text collate "C" primary key, "user_id" text collate "C" not null references "users" ("id") on delete cascade, "csrf_token" text not null, "flash" text, "created_at" text collate "C" not null, "last_seen_at" text collate "C" not null)`,
    `create index "admin_sessions_user" on "admin_sessions" ("user_id")`,
    `create index "admin_sessions_last_seen" on "admin_sessions" ("last_seen_at")`,
    `create table "login_attempts" ("id" text collate "C" primary key, "email" text collate "C" not null, "ip_address" text collate "C" not null, "attempted_at" text collate "C" not null)`,
    `create index "login_attempts_email" on "login_attempts" ("email", "attempted_at")`,
    `create index "login_attempts_ip" on "login_attempts" ("ip_address", "attempted_at")`,
    `create index "login_attempts_time" on "login_attempts" ("attempted_at")`,
    `create table "locks" ("name" text collate "C" primary key, "acquired_at" text)`,
    `insert into locks (name) values ('setup')`,
    `insert into locks (name) values ('redirects')`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [`drop table "locks"`, `drop table "login_attempts"`, `drop table "admin_sessions"`],
  postgres: [`drop table "locks"`, `drop table "login_attempts"`, `drop table "admin_sessions"`],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
