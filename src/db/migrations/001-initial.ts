import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * The first schema. Only portable column types (text, integer) so the same schema holds on SQLite
 * and PostgreSQL; every list query has an index matching its filter and order. Key columns (ids,
 * timestamps, paths) compare in byte order on both dialects (`collate binary` / `collate "C"`).
 */
const UP: FrozenStatements = {
  sqlite: [
    `create table "users" ("id" text collate binary primary key, "email" text collate binary not null unique, "password_hash" text not null, "role" text not null, "is_disabled" integer default 0 not null, "created_at" text collate binary not null, "updated_at" text not null)`,
    `create table "api_keys" ("id" text collate binary primary key, "name" text not null, "prefix" text not null, "key_hash" text collate binary not null unique, "created_by" text collate binary references "users" ("id") on delete set null, "is_active" integer default 1 not null, "revoked_at" text, "created_at" text collate binary not null, "last_used_at" text)`,
    `create table "forms" ("id" text collate binary primary key, "title" text not null, "description" text, "is_active" integer default 1 not null, "created_at" text collate binary not null, "updated_at" text not null)`,
    `create index "forms_order" on "forms" ("created_at", "id")`,
    `create index "forms_active_order" on "forms" ("is_active", "created_at", "id")`,
    `create table "submissions" ("id" text collate binary primary key, "form_id" text collate binary not null references "forms" ("id") on delete cascade, "data" text not null, "ip_address" text, "user_agent" text, "referrer" text, "submitted_by" text, "is_read" integer default 0 not null, "is_starred" integer default 0 not null, "notes" text, "created_at" text collate binary not null, "updated_at" text not null)`,
    `create index "submissions_form_order" on "submissions" ("form_id", "created_at", "id")`,
    `create table "pages" ("id" text collate binary primary key, "title" text not null, "slug" text not null, "path" text collate binary not null unique, "page_type" text not null, "is_published" integer default 0 not null, "published_at" text, "created_at" text collate binary not null, "updated_at" text not null)`,
    `create index "pages_order" on "pages" ("created_at", "id")`,
    `create index "pages_published_order" on "pages" ("is_published", "created_at", "id")`,
    `create table "redirects" ("id" text collate binary primary key, "from_path" text collate binary not null unique, "to_path" text not null, "type" text not null, "is_active" integer default 1 not null, "created_at" text collate binary not null, "updated_at" text not null)`,
    `create index "redirects_order" on "redirects" ("created_at", "id")`,
    `create index "redirects_active_order" on "redirects" ("is_active", "created_at", "id")`,
  ],
  postgres: [
    `create table "users" ("id" text collate "C" primary key, "email" text collate "C" not null unique, "password_hash" text not null, "role" text not null, "is_disabled" integer default 0 not null, "created_at" text collate "C" not null, "updated_at" text not null)`,
    `create table "api_keys" ("id" text collate "C" primary key, "name" text not null, "prefix" text not null, "key_hash" text collate "C" not null unique, "created_by" text collate "C" references "users" ("id") on delete set null, "is_active" integer default 1 not null, "revoked_at" text, "created_at" text collate "C" not null, "last_used_at" text)`,
    `create table "forms" ("id" text collate "C" primary key, "title" text not null, "description" text, "is_active" integer default 1 not null, "created_at" text collate "C" not null, "updated_at" text not null)`,
    `create index "forms_order" on "forms" ("created_at", "id")`,
    `create index "forms_active_order" on "forms" ("is_active", "created_at", "id")`,
    `create table "submissions" ("id" text collate "C" primary key, "form_id" text collate "C" not null references "forms" ("id") on delete cascade, "data" text not null, "ip_address" text, "user_agent" text, "referrer" text, "submitted_by" text, "is_read" integer default 0 not null, "is_starred" integer default 0 not null, "notes" text, "created_at" text collate "C" not null, "updated_at" text not null)`,
    `create index "submissions_form_order" on "submissions" ("form_id", "created_at", "id")`,
    `create table "pages" ("id" text collate "C" primary key, "title" text not null, "slug" text not null, "path" text collate "C" not null unique, "page_type" text not null, "is_published" integer default 0 not null, "published_at" text, "created_at" text collate "C" not null, "updated_at" text not null)`,
    `create index "pages_order" on "pages" ("created_at", "id")`,
    `create index "pages_published_order" on "pages" ("is_published", "created_at", "id")`,
    `create table "redirects" ("id" text collate "C" primary key, "from_path" text collate "C" not null unique, "to_path" text not null, "type" text not null, "is_active" integer default 1 not null, "created_at" text collate "C" not null, "updated_at" text not null)`,
    `create index "redirects_order" on "redirects" ("created_at", "id")`,
    `create index "redirects_active_order" on "redirects" ("is_active", "created_at", "id")`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [
    `drop table "redirects"`,
    `drop table "pages"`,
    `drop table "submissions"`,
    `drop table "forms"`,
    `drop table "api_keys"`,
    `drop table "users"`,
  ],
  postgres: [
    `drop table "redirects"`,
    `drop table "pages"`,
    `drop table "submissions"`,
    `drop table "forms"`,
    `drop table "api_keys"`,
    `drop table "users"`,
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
