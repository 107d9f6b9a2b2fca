import type { Kysely } from 'kysely'
import type { Executor } from '../db/executor.js'
import { insertPostedSubmissions } from '../db/repositories/intake-posts.js'
import { deleteSpamById, findSpamById, spamPageOfForm } from '../db/repositories/spam-submissions.js'
import type { Database } from '../db/tables.js'
import { NotFoundError } from '../errors.js'
import type { PageOf } from '../schemas.js'
import { now } from '../time.js'
import { type Actor, recordAudit } from './audit.js'
import { outboxWritten, recordSubmissionsCreated, submissionTargets } from './notifications/outbox.js'

/** A post the honeypot caught, as the dashboard's Spam view shows it. */
export interface SpamSubmission {
  id: string
  data: Record<string, unknown>
  ipAddress: string | null
  userAgent: string | null
  referrer: string | null
  createdAt: string
}

/**
 * A form's spam: what the honeypot caught, kept apart from submissions (see migration 012) until
 * it is deleted after 30 days, deleted by hand, or released into the inbox as not spam.
 */
export function createSpamService(db: Kysely<Database>) {
  /** The spam row `id`, or a `NotFoundError` (it may have expired, or been handled in another tab). */
  const find = async (trx: Executor, id: string) => {
    const row = await findSpamById(trx, id)
    if (row === undefined) throw new NotFoundError('That spam is no longer kept: it was handled or expired.')
    return row
  }

  return {
    /** One page of a form's spam, newest first, with how much it has in all. */
    async list(formId: string, page: number, pageSize: number): Promise<PageOf<SpamSubmission>> {
      const { total, rows } = await spamPageOfForm(db, formId, pageSize, (page - 1) * pageSize)
      return {
        total,
        items: rows.map((row) => ({
          id: row.id,
          data: JSON.parse(row.data) as Record<string, unknown>,
          ipAddress: row.ip_address,
          userAgent: row.user_agent,
          referrer: row.referrer,
          createdAt: row.created_at,
        })),
      }
    },

    /**
     * Moves a caught post into its form's submissions, unread, keeping its id and when it arrived:
     * the API lists it and the form's counts include it (the database's triggers keep those).
     */
    async release(id: string, actor: Actor): Promise<{ formId: string }> {
      // Released, it is a new submission like any other: whoever is notified of those hears of it.
      const released = await db.transaction().execute(async (trx) => {
        const row = await find(trx, id)
        await insertPostedSubmissions(trx, [row], now())
        await deleteSpamById(trx, id)
        await recordAudit(trx, {
          actor,
          action: 'spam.released',
          target: id,
          detail: { formId: row.form_id },
        })
        const notified = await recordSubmissionsCreated(
          trx,
          [id],
          await submissionTargets(trx, [row.form_id]),
        )
        return { formId: row.form_id, notified }
      })
      if (released.notified > 0) outboxWritten()
      return { formId: released.formId }
    },

    /** Deletes one caught post for good. */
    async remove(id: string, actor: Actor): Promise<{ formId: string }> {
      return db.transaction().execute(async (trx) => {
        const row = await find(trx, id)
        await deleteSpamById(trx, id)
        await recordAudit(trx, { actor, action: 'spam.deleted', target: id, detail: { formId: row.form_id } })
        return { formId: row.form_id }
      })
    },
  }
}

export type SpamService = ReturnType<typeof createSpamService>
