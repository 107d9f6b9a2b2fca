import type { Kysely } from 'kysely'
import { takeLease } from '../../db/locks.js'
import { formsWithIntake } from '../../db/repositories/forms.js'
import { deleteSpamCreatedBefore } from '../../db/repositories/spam-submissions.js'
import { deleteSubmissionsOfFormBefore } from '../../db/repositories/submissions.js'
import type { Database } from '../../db/tables.js'
import { parseStoredIntake, SPAM_RETENTION_DAYS } from '../../resources/form.js'
import { formatTimestamp } from '../../time.js'
import { recordAudit } from '../audit.js'

const DAY_MS = 86_400_000
/** How often each instance asks for the retention lease. */
const RETENTION_TICK_MS = 5 * 60_000
/**
 * How long a taken lease keeps other instances from purging. With the tick above, a purge runs
 * every 55 to 60 minutes on one instance, so "at least hourly" holds however many instances run.
 */
const RETENTION_LEASE_MS = 55 * 60_000

/** What one retention run deleted: submissions by form, and spam. */
export interface RetentionRun {
  submissions: Record<string, number>
  spam: number
}

/** Deleting what forms keep no longer, about hourly, on one instance at a time. */
export function createRetention(db: Kysely<Database>, clock: () => number) {
  let timer: NodeJS.Timeout | undefined

  const retention = {
    /**
     * Deletes the submissions older than each form's `retentionDays` and spam older than 30 days,
     * in one transaction with one audit entry when anything was deleted.
     */
    async purgeExpired(): Promise<RetentionRun> {
      const at = clock()
      return db.transaction().execute(async (trx) => {
        const run: RetentionRun = { submissions: {}, spam: 0 }
        const forms = await formsWithIntake(trx)
        for (const row of forms) {
          const days = parseStoredIntake(row.intake).retentionDays
          if (days === null) continue
          const deleted = await deleteSubmissionsOfFormBefore(
            trx,
            row.id,
            formatTimestamp(new Date(at - days * DAY_MS)),
          )
          if (deleted > 0) run.submissions[row.id] = deleted
        }
        run.spam = await deleteSpamCreatedBefore(
          trx,
          formatTimestamp(new Date(at - SPAM_RETENTION_DAYS * DAY_MS)),
        )
        if (Object.keys(run.submissions).length > 0 || run.spam > 0) {
          await recordAudit(trx, {
            actor: 'system',
            action: 'submissions.expired',
            target: 'retention',
            detail: { ...run },
          })
        }
        return run
      })
    },

    /**
     * Runs `purgeExpired` when this instance takes the retention lease, and returns what it
     * deleted; null when another instance purged less than the lease's length ago. Taking the
     * lease is one conditional update of the `retention` row, so two instances cannot both win.
     */
    async purgeIfDue(): Promise<RetentionRun | null> {
      const at = clock()
      const taken = await takeLease(
        db,
        'retention',
        formatTimestamp(new Date(at)),
        formatTimestamp(new Date(at - RETENTION_LEASE_MS)),
      )
      if (!taken) return null
      return retention.purgeExpired()
    },

    /** Asks for the lease now and every few minutes until `stop()`, telling `onError` of failures. */
    start(onError: (error: unknown) => void = () => {}): void {
      if (timer !== undefined) return
      const tick = () => void retention.purgeIfDue().catch(onError)
      tick()
      timer = setInterval(tick, RETENTION_TICK_MS)
      timer.unref()
    },

    stop(): void {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    },
  }
  return retention
}
