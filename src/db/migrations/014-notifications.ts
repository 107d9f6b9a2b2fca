import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * Notifications: a durable outbox. An event (`notification_events`) and one delivery per target
 * (`notification_deliveries`: a webhook endpoint, or the email of the event's form) are written in
 * the transaction of the change that causes them, so a crash can lose neither the change's
 * notification nor keep a notification of a change that never committed. A delivery's id is its
 * event's id and its target (`evt_…:whk_…`, `evt_…:email`), so writing one twice is a conflict.
 *
 * Workers claim due deliveries with a lease (`claimed_until`): a dead instance's claims expire and
 * another takes them. `expires_at` ends the retries (three days after the event, or a resend).
 *
 * Endpoints keep their signing secrets encrypted under a key held outside the database; during a
 * rotation the previous secret signs too until `previous_secret_until`.
 *
 * `notification_cursors` holds the content versions the last `content.changed` event covered, and
 * the `notifications` row of `locks` is the lease of the instance that emits it.
 */
const UP: FrozenStatements = {
  sqlite: [
    `create table "webhook_endpoints" ("id" text collate binary primary key, "url" text not null, "events" text not null, "form_id" text collate binary, "status" text collate binary not null, "secret" text not null, "previous_secret" text, "previous_secret_until" text collate binary, "consecutive_failures" integer not null default 0, "last_failure_at" text collate binary, "last_success_at" text collate binary, "created_at" text collate binary not null)`,
    `create table "notification_events" ("id" text collate binary primary key, "type" text collate binary not null, "form_id" text collate binary, "submission_id" text collate binary, "data" text not null, "created_at" text collate binary not null)`,
    `create index "notification_events_submission" on "notification_events" ("submission_id")`,
    `create table "notification_deliveries" ("id" text collate binary primary key, "event_id" text collate binary not null references "notification_events" ("id") on delete cascade, "endpoint_id" text collate binary references "webhook_endpoints" ("id") on delete cascade, "channel" text collate binary not null, "status" text collate binary not null, "attempts" integer not null default 0, "last_status" text, "response_code" integer, "duration_ms" integer, "last_error" text, "next_attempt_at" text collate binary not null, "delivered_at" text collate binary, "claimed_until" text collate binary, "expires_at" text collate binary not null, "created_at" text collate binary not null, "updated_at" text collate binary not null)`,
    `create index "notification_deliveries_due" on "notification_deliveries" ("next_attempt_at") where "status" = 'pending'`,
    `create index "notification_deliveries_endpoint" on "notification_deliveries" ("endpoint_id", "created_at")`,
    `create index "notification_deliveries_event" on "notification_deliveries" ("event_id")`,
    `create table "notification_cursors" ("kind" text collate binary primary key, "version" bigint not null)`,
    `insert into "notification_cursors" ("kind", "version") select "kind", "version" from "content_versions"`,
    `insert into locks (name) values ('notifications')`,
  ],
  postgres: [
    `create table "webhook_endpoints" ("id" text collate "C" primary key, "url" text not null, "events" text not null, "form_id" text collate "C", "status" text collate "C" not null, "secret" text not null, "previous_secret" text, "previous_secret_until" text collate "C", "consecutive_failures" integer not null default 0, "last_failure_at" text collate "C", "last_success_at" text collate "C", "created_at" text collate "C" not null)`,
    `create table "notification_events" ("id" text collate "C" primary key, "type" text collate "C" not null, "form_id" text collate "C", "submission_id" text collate "C", "data" text not null, "created_at" text collate "C" not null)`,
    `create index "notification_events_submission" on "notification_events" ("submission_id")`,
    `create table "notification_deliveries" ("id" text collate "C" primary key, "event_id" text collate "C" not null references "notification_events" ("id") on delete cascade, "endpoint_id" text collate "C" references "webhook_endpoints" ("id") on delete cascade, "channel" text collate "C" not null, "status" text collate "C" not null, "attempts" integer not null default 0, "last_status" text, "response_code" integer, "duration_ms" integer, "last_error" text, "next_attempt_at" text collate "C" not null, "delivered_at" text collate "C", "claimed_until" text collate "C", "expires_at" text collate "C" not null, "created_at" text collate "C" not null, "updated_at" text collate "C" not null)`,
    `create index "notification_deliveries_due" on "notification_deliveries" ("next_attempt_at") where "status" = 'pending'`,
    `create index "notification_deliveries_endpoint" on "notification_deliveries" ("endpoint_id", "created_at")`,
    `create index "notification_deliveries_event" on "notification_deliveries" ("event_id")`,
    `create table "notification_cursors" ("kind" text collate "C" primary key, "version" bigint not null)`,
    `insert into "notification_cursors" ("kind", "version") select "kind", "version" from "content_versions"`,
    `insert into locks (name) values ('notifications')`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [
    `delete from locks where name = 'notifications'`,
    `drop table "notification_cursors"`,
    `drop table "notification_deliveries"`,
    `drop table "notification_events"`,
    `drop table "webhook_endpoints"`,
  ],
  postgres: [
    `delete from locks where name = 'notifications'`,
    `drop table "notification_cursors"`,
    `drop table "notification_deliveries"`,
    `drop table "notification_events"`,
    `drop table "webhook_endpoints"`,
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
