import type { Kysely } from 'kysely'
import { type FrozenStatements, runFrozen } from './frozen.js'

/**
 * API keys may expire: `expires_at` (null: never) is read with the key on every request, and
 * `expiry_recorded_at` says when the first use after expiry was written to the audit log, so that
 * it is recorded once however often the key is presented.
 */
const UP: FrozenStatements = {
  sqlite: [
    `alter table "api_keys" add column "expires_at" text collate binary`,
    `alter table "api_keys" add column "expiry_recorded_at" text collate binary`,
  ],
  postgres: [
    `alter table "api_keys" add column "expires_at" text collate "C"`,
    `alter table "api_keys" add column "expiry_recorded_at" text collate "C"`,
  ],
}

const DOWN: FrozenStatements = {
  sqlite: [
    `alter table "api_keys" drop column "expiry_recorded_at"`,
    `alter table "api_keys" drop column "expires_at"`,
  ],
  postgres: [
    `alter table "api_keys" drop column "expiry_recorded_at"`,
    `alter table "api_keys" drop column "expires_at"`,
  ],
}

export const up = (db: Kysely<unknown>): Promise<void> => runFrozen(db, UP)
export const down = (db: Kysely<unknown>): Promise<void> => runFrozen(db, DOWN)
