import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * API key usage per hour: each instance counts requests in memory and adds its counts here about
 * once a minute (an upsert per key and hour), so serving a request never writes to the database.
 * `hour` is the hour's start in the canonical UTC form; `rejected` counts the 429s among `requests`.
 */
const UP: FrozenStatements = {
  sqlite: [
    `create table "key_usage_hourly" ("key_id" text collate binary not null references "api_keys" ("id") on delete cascade, "hour" text collate binary not null, "requests" integer not null default 0, "rejected" integer not null default 0, primary key ("key_id", "hour"))`,
    `create index "key_usage_hourly_hour" on "key_usage_hourly" ("hour")`,
  ],
  postgres: [
    `create table "key_usage_hourly" ("key_id" text collate "C" not null references "api_keys" ("id") on delete cascade, "hour" text collate "C" not null, "requests" bigint not null default 0, "rejected" bigint not null default 0, primary key ("key_id", "hour"))`,
    `create index "key_usage_hourly_hour" on "key_usage_hourly" ("hour")`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [`drop table "key_usage_hourly"`],
  postgres: [`drop table "key_usage_hourly"`],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
