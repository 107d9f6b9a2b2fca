import type { Kysely } from 'kysely'
import { auditEntries, countAuditEntries, insertAuditEntry } from '../db/repositories/audit-log.js'
import type { Database } from '../db/tables.js'
import { ValidationError } from '../errors.js'
import type { PageOf } from '../schemas.js'
import { now } from '../time.js'

/**
 * Who made a change: a signed-in dashboard user, or the command line. Service methods that change
 * something take one; callers that say nothing (the CLI, scripts, tests) act as `cli`. `system`
 * is Lectern itself, for what no person did at that moment (a key reaching its expiry).
 */
export type Actor = { email: string } | 'cli' | 'system'

/** Every action the audit log records. */
export const AUDIT_ACTIONS = [
  'key.created',
  'key.renamed',
  'key.deactivated',
  'key.activated',
  'key.revoked',
  'key.expired',
  'user.created',
  'user.role_changed',
  'user.disabled',
  'user.enabled',
  'user.deleted',
  'user.password_changed',
  'session.signed_in',
  'session.sign_in_failed',
  'session.password_check_failed',
  'session.ended',
  'content.imported',
  'form.created',
  'form.updated',
  'form.deleted',
  'form.intake_changed',
  'page.created',
  'page.updated',
  'page.deleted',
  'submission.updated',
  'submissions.updated',
  'submissions.exported',
  'submissions.deleted',
  'submissions.expired',
  'spam.released',
  'spam.deleted',
  'redirect.created',
  'redirect.updated',
  'redirect.deleted',
  'redirects.imported',
  'redirects.flattened',
  'webhook.created',
  'webhook.deleted',
  'webhook.enabled',
  'webhook.secret_rotated',
  'webhook.resent',
] as const

export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/** One entry as the CLI and the dashboard show it. */
export interface AuditEntry {
  id: number
  /** When the change was made (UTC, second precision). */
  at: string
  /** The user's email, or `cli`. */
  actor: string
  action: AuditAction | string
  /** What was changed: a key id, a user's email, a redirect id… */
  target: string
  /** What else is worth knowing about the change (names, old and new values); never a secret. */
  detail: Record<string, unknown> | null
}

/** What `recordAudit` writes. */
export interface AuditRecord {
  actor: Actor
  action: AuditAction
  target: string
  detail?: Record<string, unknown>
}

/** How an actor is written in the log. */
export function actorName(actor: Actor): string {
  return typeof actor === 'string' ? actor : actor.email
}

/**
 * Writes one audit entry through `trx`: pass the transaction of the change it records, so that the
 * entry and the change are committed together or not at all. `detail` must never hold a secret.
 */
export async function recordAudit(trx: Kysely<Database>, record: AuditRecord): Promise<void> {
  await insertAuditEntry(trx, {
    at: now(),
    actor: actorName(record.actor),
    action: record.action,
    target: record.target,
    detail: record.detail === undefined ? null : JSON.stringify(record.detail),
  })
}

/** Which entries a listing wants: all of them, or those of one action and/or one actor. */
export interface AuditFilter {
  action?: string
  actor?: string
}

/** The longest filter value looked up; anything longer cannot match an action or an email. */
const MAX_FILTER_LENGTH = 320

function parseDetail(value: string | null): Record<string, unknown> | null {
  if (value === null) return null
  try {
    const parsed: unknown = JSON.parse(value)
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null
  } catch {
    return null
  }
}

/** An entry as read from its row. */
export const toAuditEntry = (row: {
  id: number | string
  at: string
  actor: string
  action: string
  target: string
  detail: string | null
}): AuditEntry => ({
  id: Number(row.id),
  at: row.at,
  actor: row.actor,
  action: row.action,
  target: row.target,
  detail: parseDetail(row.detail),
})

/** Reading the audit log (writing happens inside each change, through `recordAudit`). */
export function createAuditService(db: Kysely<Database>) {
  /** The filter as the log holds it: actors are stored lower-cased. */
  const checked = (filter: AuditFilter): AuditFilter => {
    for (const value of [filter.action, filter.actor])
      if (value !== undefined && (value.length > MAX_FILTER_LENGTH || value.includes('\0')))
        throw new ValidationError('An audit filter must be at most 320 characters, without NUL')
    return {
      ...(filter.action ? { action: filter.action } : {}),
      ...(filter.actor ? { actor: filter.actor.trim().toLowerCase() } : {}),
    }
  }
  return {
    /** The newest `limit` entries (at most 10,000), newest first. */
    recent: async (limit: number): Promise<AuditEntry[]> => {
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
        throw new ValidationError('The limit must be an integer from 1 to 10000')
      return (await auditEntries(db, {}, limit)).map(toAuditEntry)
    },

    /** One page of the entries matching `filter`, newest first, with how many match in all. */
    list: async (
      filter: AuditFilter,
      options: { page: number; pageSize: number },
    ): Promise<PageOf<AuditEntry>> => {
      const wanted = checked(filter)
      const total = await countAuditEntries(db, wanted)
      const rows = await auditEntries(db, wanted, options.pageSize, (options.page - 1) * options.pageSize)
      return { items: rows.map(toAuditEntry), total }
    },
  }
}

export type AuditService = ReturnType<typeof createAuditService>
