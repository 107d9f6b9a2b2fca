import type { Kysely } from 'kysely'
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
  const find = async (trx: Kysely<Database>, id: string) => {
    const row = await trx.selectFrom('spam_submissions').selectAll().where('id', '=', id).executeTakeFirst()
    if (row === undefined) throw new NotFoundError('That spam is no longer kept: it was handled or expired.')
    return row
  }

  return {
    /** One page of a form's spam, newest first, with how much it has in all. */
    async list(formId: string, page: number, pageSize: number): Promise<PageOf<SpamSubmission>> {
      const { total } = await db
        .selectFrom('spam_submissions')
        .select((eb) => eb.fn.countAll<number | string>().as('total'))
        .where('form_id', '=', formId)
        .executeTakeFirstOrThrow()
      const rows = await db
        .selectFrom('spam_submissions')
        .selectAll()
        .where('form_id', '=', formId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(pageSize)
        .offset((page - 1) * pageSize)
        .execute()
      return {
        total: Number(total),
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
        await trx
          .insertInto('submissions')
          .values({
            ...row,
            submitted_by: null,
            is_read: 0,
            is_starred: 0,
            notes: null,
            updated_at: now(),
          })
          .execute()
        await trx.deleteFrom('spam_submissions').where('id', '=', id).execute()
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
        await trx.deleteFrom('spam_submissions').where('id', '=', id).execute()
        await recordAudit(trx, { actor, action: 'spam.deleted', target: id, detail: { formId: row.form_id } })
        return { formId: row.form_id }
      })
    },
  }
}

export type SpamService = ReturnType<typeof createSpamService>
