import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * A single-row counter that every write to content moves forward, maintained by triggers so that no
 * write path (import, dashboard, CLI, or an operator's own SQL) can forget it. Readers compare it
 * with the version their cached responses were built at: equal means the cache is exact.
 * PostgreSQL fires its trigger once per statement; SQLite has only row triggers.
 */
const UP: FrozenStatements = {
  sqlite: [
    `create table "content_version" ("id" integer primary key, "version" bigint not null)`,
    `insert into "content_version" ("id", "version") values (1, 1)`,
    `create trigger "forms_insert_content_version"
        after insert on "forms"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "forms_update_content_version"
        after update on "forms"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "forms_delete_content_version"
        after delete on "forms"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "submissions_insert_content_version"
        after insert on "submissions"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "submissions_update_content_version"
        after update on "submissions"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "submissions_delete_content_version"
        after delete on "submissions"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "pages_insert_content_version"
        after insert on "pages"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "pages_update_content_version"
        after update on "pages"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "pages_delete_content_version"
        after delete on "pages"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "redirects_insert_content_version"
        after insert on "redirects"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "redirects_update_content_version"
        after update on "redirects"
        begin update content_version set version = version + 1 where id = 1; end`,
    `create trigger "redirects_delete_content_version"
        after delete on "redirects"
        begin update content_version set version = version + 1 where id = 1; end`,
  ],
  postgres: [
    `create table "content_version" ("id" integer primary key, "version" bigint not null)`,
    `insert into "content_version" ("id", "version") values (1, 1)`,
    `create function bump_content_version() returns trigger language plpgsql as $$
      begin update content_version set version = version + 1 where id = 1; return null; end $$`,
    `create trigger "forms_content_version"
        after insert or update or delete or truncate on "forms"
        for each statement execute function bump_content_version()`,
    `create trigger "submissions_content_version"
        after insert or update or delete or truncate on "submissions"
        for each statement execute function bump_content_version()`,
    `create trigger "pages_content_version"
        after insert or update or delete or truncate on "pages"
        for each statement execute function bump_content_version()`,
    `create trigger "redirects_content_version"
        after insert or update or delete or truncate on "redirects"
        for each statement execute function bump_content_version()`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [
    `drop trigger if exists "forms_insert_content_version"`,
    `drop trigger if exists "forms_update_content_version"`,
    `drop trigger if exists "forms_delete_content_version"`,
    `drop trigger if exists "submissions_insert_content_version"`,
    `drop trigger if exists "submissions_update_content_version"`,
    `drop trigger if exists "submissions_delete_content_version"`,
    `drop trigger if exists "pages_insert_content_version"`,
    `drop trigger if exists "pages_update_content_version"`,
    `drop trigger if exists "pages_delete_content_version"`,
    `drop trigger if exists "redirects_insert_content_version"`,
    `drop trigger if exists "redirects_update_content_version"`,
    `drop trigger if exists "redirects_delete_content_version"`,
    `drop table "content_version"`,
  ],
  postgres: [
    `drop trigger if exists "forms_content_version" on "forms"`,
    `drop trigger if exists "submissions_content_version" on "submissions"`,
    `drop trigger if exists "pages_content_version" on "pages"`,
    `drop trigger if exists "redirects_content_version" on "redirects"`,
    `drop function if exists bump_content_version()`,
    `drop table "content_version"`,
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
