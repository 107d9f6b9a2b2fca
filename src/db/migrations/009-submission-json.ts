import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * Each submission's JSON as the API writes it, as a column the database keeps: `json`, generated
 * from the row's other columns, so no writer can leave it out of date. Byte for byte
 * `JSON.stringify` of the presented submission (fields in the SPEC's order; strings escaped as
 * `JSON.stringify` escapes them; the stored `data` spliced in when shaped `{…}`, which is how
 * Lectern writes it, and parsed and written again otherwise).
 *
 * PostgreSQL stores it: writing a row's JSON there costs about 5 µs (eight `to_json` calls), half
 * of what a page of submissions cost the database. Its generation expression must be immutable,
 * so it is one function declared so: for text and integer arguments `to_json` depends on no
 * setting. Adding the column rewrites the table once.
 *
 * SQLite computes it when it is read (a virtual column): there it costs a small part of a page, and
 * storing it would double the file and the bytes every import writes. One `format()` call writes
 * the text into one buffer.
 */
const UP: FrozenStatements = {
  sqlite: [
    `alter table "submissions" add column "json" text generated always as (format('{"id":%s,"data":%s,"ipAddress":%s,"userAgent":%s,"referrer":%s,"submittedBy":%s,"isRead":%s,"isStarred":%s,"notes":%s,"createdAt":%s,"updatedAt":%s}',
      json_quote("id"),
      case when "data" like '{%}' then "data" else json("data") end,
      json_quote("ip_address"),
      json_quote("user_agent"),
      json_quote("referrer"),
      json_quote("submitted_by"),
      case when "is_read" = 1 then 'true' else 'false' end,
      case when "is_starred" = 1 then 'true' else 'false' end,
      json_quote("notes"),
      json_quote("created_at"),
      json_quote("updated_at"))) virtual`,
  ],
  postgres: [
    `create function "lectern_submission_json"(
      id text, data text, ip_address text, user_agent text, referrer text, submitted_by text,
      is_read integer, is_starred integer, notes text, created_at text, updated_at text
    ) returns text language plpgsql immutable parallel safe as $$
    begin
      return '{"id":' || to_json(id)::text
        || ',"data":' || case when data like '{%}' then data else (data::jsonb)::text end
        || ',"ipAddress":' || coalesce(to_json(ip_address)::text, 'null')
        || ',"userAgent":' || coalesce(to_json(user_agent)::text, 'null')
        || ',"referrer":' || coalesce(to_json(referrer)::text, 'null')
        || ',"submittedBy":' || coalesce(to_json(submitted_by)::text, 'null')
        || ',"isRead":' || case when is_read = 1 then 'true' else 'false' end
        || ',"isStarred":' || case when is_starred = 1 then 'true' else 'false' end
        || ',"notes":' || coalesce(to_json(notes)::text, 'null')
        || ',"createdAt":' || to_json(created_at)::text
        || ',"updatedAt":' || to_json(updated_at)::text
        || '}';
    end
    $$`,
    `alter table "submissions" add column "json" text generated always as ("lectern_submission_json"(
      "id", "data", "ip_address", "user_agent", "referrer", "submitted_by",
      "is_read", "is_starred", "notes", "created_at", "updated_at")) stored`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [`alter table "submissions" drop column "json"`],
  postgres: [
    `alter table "submissions" drop column "json"`,
    `drop function "lectern_submission_json"(text, text, text, text, text, text, integer, integer, text, text, text)`,
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
