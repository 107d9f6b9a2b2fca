import type { Kysely } from 'kysely'
import { createGroupCommit } from '../db/group-commit.js'
import type { DatabaseHandle } from '../db/handle.js'
import { param } from '../db/prepared.js'
import type { Database } from '../db/tables.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { newId } from '../ids.js'
import {
  type FieldDefinition,
  type IntakeSettings,
  type PostedValue,
  parseStoredIntake,
  readIntakeSettings,
  SPAM_RETENTION_DAYS,
} from '../resources/form.js'
import { formatTimestamp } from '../time.js'
import { type Actor, recordAudit } from './audit.js'
import {
  type FormListeners,
  formListenerColumns,
  formListenersOf,
  outboxWritten,
  recordSubmissionsCreated,
  targetsOfListeners,
} from './notifications/outbox.js'

const DAY_MS = 86_400_000
/** How often each instance asks for the retention lease. */
const RETENTION_TICK_MS = 5 * 60_000
/**
 * How long a taken lease keeps other instances from purging. With the tick above, a purge runs
 * every 55 to 60 minutes on one instance, so "at least hourly" holds however many instances run.
 */
const RETENTION_LEASE_MS = 55 * 60_000

/**
 * Groups of up to this many posts (no spam, no listeners) are written by a prepared statement of
 * their size; a larger group, rare below a thousand posts a second, is built each time.
 */
const PREPARED_GROUP_ROWS = 8

/** A form as the intake needs it: whether it takes posts, and by which rules. */
export interface IntakeForm {
  id: string
  title: string
  description: string | null
  isActive: boolean
  settings: IntakeSettings
}

/** One post, as the intake's face read it; `data` holds only non-control fields. */
export interface IntakePost {
  data: Record<string, PostedValue>
  ipAddress: string | null
  userAgent: string | null
  referrer: string | null
  /** The honeypot was filled in: kept apart from submissions, never listed by the API. */
  spam: boolean
}

/** A post waiting for its group's commit. */
interface QueuedPost {
  id: string
  formId: string
  post: IntakePost
  at: string
  /** Who listens to its form's new submissions, read with the form (`formForPost`). */
  listeners: FormListeners
}

/** What one retention run deleted: submissions by form, and spam. */
export interface RetentionRun {
  submissions: Record<string, number>
  spam: number
}

export function createIntakeService(database: DatabaseHandle, options: { clock?: () => number } = {}) {
  const db = database.db
  const clock = options.clock ?? Date.now
  let timer: NodeJS.Timeout | undefined
  // Every post reads its form, and who listens to its new submissions, in one prepared statement.
  const readForm = database.prepare(
    db
      .selectFrom('forms')
      .select(['id', 'title', 'description', 'is_active', 'intake'])
      .select((eb) => formListenerColumns(eb))
      .where('id', '=', param('formId')),
  )

  async function formForPost(formId: string): Promise<{ form: IntakeForm; listeners: FormListeners } | null> {
    const [row] = await readForm({ formId })
    if (row === undefined) return null
    return {
      form: {
        id: row.id,
        title: row.title,
        description: row.description,
        isActive: row.is_active === 1,
        settings: parseStoredIntake(row.intake),
      },
      listeners: formListenersOf(row),
    }
  }

  async function form(formId: string): Promise<IntakeForm | null> {
    return (await formForPost(formId))?.form ?? null
  }

  /** Writes a group of posts in one transaction: submissions, spam, and the notifications they owe. */
  async function writePosts(group: QueuedPost[]): Promise<string[]> {
    const rows = group.map(({ id, formId, post, at }) => ({
      id,
      form_id: formId,
      data: JSON.stringify(post.data),
      ip_address: post.ipAddress,
      user_agent: post.userAgent,
      referrer: post.referrer,
      created_at: at,
    }))
    const spam = rows.filter((_, index) => group[index]?.post.spam === true)
    const kept = rows.filter((_, index) => group[index]?.post.spam !== true)
    const ids = group.map((queued) => queued.id)
    const insertSpam = (executor: Kysely<Database>) =>
      executor.insertInto('spam_submissions').values(spam).execute()
    const insertKept = (executor: Kysely<Database>) =>
      executor
        .insertInto('submissions')
        .values(
          kept.map((row) => ({
            ...row,
            submitted_by: null,
            is_read: 0,
            is_starred: 0,
            notes: null,
            updated_at: row.created_at,
          })),
        )
        .execute()
    // Who listens was read with each post's form, before the transaction: nothing in it changes that.
    const targets = targetsOfListeners(group.filter((queued) => !queued.post.spam))
    if (targets === null && (spam.length === 0 || kept.length === 0)) {
      // One statement is atomic on its own. Without BEGIN and COMMIT, SQLite keeps no statement
      // journal for it (a submission's, with 8 KiB pages, spills to a temporary file that is
      // created and deleted each time) and PostgreSQL saves two round trips.
      if (kept.length > 0 && kept.length <= PREPARED_GROUP_ROWS) await insertPrepared(kept)
      else await (kept.length > 0 ? insertKept(db) : insertSpam(db))
      return ids
    }
    // The submissions and their notifications commit together, or none does. Spam notifies no one.
    const notified = await db.transaction().execute(async (trx) => {
      if (spam.length > 0) await insertSpam(trx)
      if (kept.length === 0) return 0
      await insertKept(trx)
      return recordSubmissionsCreated(
        trx,
        kept.map((row) => row.id),
        targets,
        new Date(clock()),
      )
    })
    if (notified > 0) outboxWritten()
    return ids
  }
  // A post alone, as most are below a few hundred a second, or a few arriving together, is one
  // prepared statement: building and compiling the insert each time cost about as much as SQLite's
  // own work on it. One statement per group size, prepared on first use.
  const preparedInserts = new Map<number, ReturnType<typeof prepareInsert>>()
  function prepareInsert(size: number) {
    return database.prepare(
      db
        .insertInto('submissions')
        .values(
          Array.from({ length: size }, (_, index) => ({
            id: param(`id_${index}`),
            form_id: param(`form_id_${index}`),
            data: param(`data_${index}`),
            ip_address: param(`ip_address_${index}`),
            user_agent: param(`user_agent_${index}`),
            referrer: param(`referrer_${index}`),
            submitted_by: null,
            is_read: 0,
            is_starred: 0,
            notes: null,
            created_at: param(`created_at_${index}`),
            updated_at: param(`created_at_${index}`),
          })),
        )
        .returning('id'),
    )
  }
  function insertPrepared(rows: Record<string, unknown>[]) {
    let insert = preparedInserts.get(rows.length)
    if (insert === undefined) {
      insert = prepareInsert(rows.length)
      preparedInserts.set(rows.length, insert)
    }
    const values: Record<string, unknown> = {}
    rows.forEach((row, index) => {
      for (const [name, value] of Object.entries(row)) values[`${name}_${index}`] = value
    })
    return insert(values)
  }
  const posts = createGroupCommit(writePosts)

  const service = {
    /** The form with its intake settings, or null when there is no such form. */
    form,

    /** The same, with who listens to its new submissions, for a post to hand to `accept`. */
    formForPost,

    /** A form as `GET /api/v1/forms/{id}` shows it; a form that does not exist is a `NotFoundError`. */
    async describe(formId: string): Promise<IntakeForm & { fields: FieldDefinition[] }> {
      const found = await form(formId)
      if (found === null) throw new NotFoundError(`Form '${formId}' not found`)
      return { ...found, fields: found.settings.fields }
    },

    /**
     * Replaces a form's intake settings with `input` (absent members take their defaults); refuses
     * bad settings with every problem at once. Audited as `form.intake_changed`.
     */
    async updateSettings(formId: string, input: unknown, actor: Actor = 'cli'): Promise<IntakeSettings> {
      const { settings, problems } = readIntakeSettings(input)
      if (problems.length > 0)
        throw new ValidationError(`Invalid intake settings: ${problems.join('; ')}`, problems)
      return db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('forms').select('intake').where('id', '=', formId).executeTakeFirst()
        if (row === undefined) throw new NotFoundError(`Form '${formId}' not found`)
        const before = parseStoredIntake(row.intake)
        const changed = (Object.keys(settings) as (keyof IntakeSettings)[]).filter(
          (key) => JSON.stringify(before[key]) !== JSON.stringify(settings[key]),
        )
        await trx
          .updateTable('forms')
          .set({ intake: JSON.stringify(settings), updated_at: formatTimestamp(new Date(clock())) })
          .where('id', '=', formId)
          .execute()
        await recordAudit(trx, {
          actor,
          action: 'form.intake_changed',
          target: formId,
          detail: { changed, enabled: settings.enabled },
        })
        return settings
      })
    },

    /**
     * Stores one accepted post and returns its id once it is committed; spam goes to its own table.
     * Posts arriving together share one transaction (`db/group-commit.ts`). `listeners` are those
     * read with the form (`formForPost`): the group writes the notifications they owe.
     */
    async accept(formId: string, post: IntakePost, listeners: FormListeners): Promise<string> {
      return posts.write({
        id: newId('submission'),
        formId,
        post,
        at: formatTimestamp(new Date(clock())),
        listeners,
      })
    },

    /** Resolves once every post accepted so far is committed (for an orderly shutdown). */
    drained: () => posts.drained(),

    /** How many caught posts a form has in its spam, for the dashboard and for checks. */
    async spamCount(formId: string): Promise<number> {
      const row = await db
        .selectFrom('spam_submissions')
        .select((eb) => eb.fn.countAll<number | string>().as('count'))
        .where('form_id', '=', formId)
        .executeTakeFirstOrThrow()
      return Number(row.count)
    },

    /**
     * Deletes the submissions older than each form's `retentionDays` and spam older than 30 days,
     * in one transaction with one audit entry when anything was deleted.
     */
    async purgeExpired(): Promise<RetentionRun> {
      const at = clock()
      return db.transaction().execute(async (trx) => {
        const run: RetentionRun = { submissions: {}, spam: 0 }
        const forms = await trx
          .selectFrom('forms')
          .select(['id', 'intake'])
          .where('intake', 'is not', null)
          .execute()
        for (const row of forms) {
          const days = parseStoredIntake(row.intake).retentionDays
          if (days === null) continue
          const result = await trx
            .deleteFrom('submissions')
            .where('form_id', '=', row.id)
            .where('created_at', '<', formatTimestamp(new Date(at - days * DAY_MS)))
            .executeTakeFirst()
          const deleted = Number(result.numDeletedRows)
          if (deleted > 0) run.submissions[row.id] = deleted
        }
        const spam = await trx
          .deleteFrom('spam_submissions')
          .where('created_at', '<', formatTimestamp(new Date(at - SPAM_RETENTION_DAYS * DAY_MS)))
          .executeTakeFirst()
        run.spam = Number(spam.numDeletedRows)
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
      const taken = await db
        .updateTable('locks')
        .set({ acquired_at: formatTimestamp(new Date(at)) })
        .where('name', '=', 'retention')
        .where((eb) =>
          eb.or([
            eb('acquired_at', 'is', null),
            eb('acquired_at', '<=', formatTimestamp(new Date(at - RETENTION_LEASE_MS))),
          ]),
        )
        .executeTakeFirst()
      if (Number(taken.numUpdatedRows) === 0) return null
      return service.purgeExpired()
    },

    /** Asks for the lease now and every few minutes until `stop()`, telling `onError` of failures. */
    start(onError: (error: unknown) => void = () => {}): void {
      if (timer !== undefined) return
      const tick = () => void service.purgeIfDue().catch(onError)
      tick()
      timer = setInterval(tick, RETENTION_TICK_MS)
      timer.unref()
    },

    stop(): void {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
    },
  }
  return service
}

export type IntakeService = ReturnType<typeof createIntakeService>
