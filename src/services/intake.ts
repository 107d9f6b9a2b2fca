import { LRUCache } from 'lru-cache'
import { createGroupCommit } from '../db/group-commit.js'
import type { DatabaseHandle } from '../db/handle.js'
import { takeLease } from '../db/locks.js'
import { findFormIntake, formsWithIntake, setFormIntake } from '../db/repositories/forms.js'
import {
  type Executor,
  insertGuardedRows,
  insertPostedSubmissions,
  prepareFormForPost,
  prepareGuardedInserts,
} from '../db/repositories/intake-posts.js'
import {
  countSpamOfForm,
  deleteSpamCreatedBefore,
  insertSpamSubmissions,
} from '../db/repositories/spam-submissions.js'
import { deleteSubmissionsOfFormBefore } from '../db/repositories/submissions.js'
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

/** How many forms each instance remembers for posts (see `formForPost`). */
const REMEMBERED_FORMS = 1_000

/** A form as the intake needs it: whether it takes posts, and by which rules. */
export interface IntakeForm {
  id: string
  title: string
  description: string | null
  isActive: boolean
  settings: IntakeSettings
}

/** Whether a form takes posts now: it is active and its intake is enabled. */
export const takesPosts = (form: IntakeForm) => form.isActive && form.settings.enabled

/** A form as a post reads it: the form, who listens to its new submissions, and when it was read. */
export interface PostingForm {
  form: IntakeForm
  listeners: FormListeners
  /** The forms version (migration 011) read with it: a plain post is stored only while it holds. */
  readAt: number
  /**
   * Read from this instance's memory, not from the database: it may be out of date, so whatever it
   * refuses is decided again on a fresh read (the face does that).
   */
  remembered: boolean
}

/**
 * The form changed (or gained listeners) after the post's read of it: nothing was written, and the
 * post must be decided again on a fresh read.
 */
export class FormReadStale extends Error {
  constructor() {
    super('the form changed after it was read')
    this.name = 'FormReadStale'
  }
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
  /**
   * A plain post (no spam, nobody listening): the forms version its form was read at. It is stored
   * only if that is still the version and still nobody listens, checked by its insert.
   */
  readAt?: number
}

/** What one retention run deleted: submissions by form, and spam. */
export interface RetentionRun {
  submissions: Record<string, number>
  spam: number
}

const ids = (rows: readonly { id: string }[]) => new Set(rows.map((row) => row.id))

export function createIntakeService(database: DatabaseHandle, options: { clock?: () => number } = {}) {
  const db = database.db
  const clock = options.clock ?? Date.now
  let timer: NodeJS.Timeout | undefined
  // Every post's form, who listens to its new submissions and the forms version, in one prepared
  // statement.
  const readForm = prepareFormForPost(database)
  // A plain post's insert, prepared once per size of group (see `prepareGuardedInserts`).
  const insertGuarded = prepareGuardedInserts(database)
  // Forms that take posts and that nobody listens to, as last read: a post to one of them is
  // decided without a read (one statement per post instead of two, on PostgreSQL a round trip
  // fewer), and its insert checks that the form has not changed since (`guardedInsert`, in
  // `db/repositories/intake-posts.ts`).
  const remembered = new LRUCache<string, PostingForm>({ max: REMEMBERED_FORMS })

  async function readFresh(formId: string): Promise<PostingForm | null> {
    const [row] = await readForm(formId)
    if (row === undefined) {
      remembered.delete(formId)
      return null
    }
    const read: PostingForm = {
      form: {
        id: row.id,
        title: row.title,
        description: row.description,
        isActive: row.is_active === 1,
        settings: parseStoredIntake(row.intake),
      },
      listeners: formListenersOf(row),
      readAt: Number(row.forms_version ?? 0),
      remembered: false,
    }
    if (takesPosts(read.form) && !read.listeners.allForms && !read.listeners.thisForm)
      remembered.set(formId, { ...read, remembered: true })
    else remembered.delete(formId)
    return read
  }

  /**
   * The form a post goes to: from memory when this instance remembers it (see `PostingForm.remembered`),
   * else read from the database; `fresh` always reads. Null when there is no such form.
   */
  async function formForPost(formId: string, { fresh = false } = {}): Promise<PostingForm | null> {
    if (!fresh) {
      const kept = remembered.get(formId)
      if (kept !== undefined) return kept
    }
    return readFresh(formId)
  }

  async function form(formId: string): Promise<IntakeForm | null> {
    return (await readFresh(formId))?.form ?? null
  }

  /**
   * Writes a group of posts: plain ones each only if its form is as it was read (`readAt`), the
   * others with the notifications they owe. One statement, or one transaction. A plain post not
   * written because its form changed is null in the result.
   */
  async function writePosts(group: QueuedPost[]): Promise<(string | null)[]> {
    const row = ({ id, formId, post, at }: QueuedPost) => ({
      id,
      form_id: formId,
      data: JSON.stringify(post.data),
      ip_address: post.ipAddress,
      user_agent: post.userAgent,
      referrer: post.referrer,
      created_at: at,
    })
    const plain = group.filter((queued) => queued.readAt !== undefined)
    const others = group.filter((queued) => queued.readAt === undefined)
    const spam = others.filter((queued) => queued.post.spam).map(row)
    const kept = others.filter((queued) => !queued.post.spam)
    const guarded = plain.map((queued) => ({ ...row(queued), read_at: queued.readAt as number }))
    const insertSpam = (executor: Executor) => insertSpamSubmissions(executor, spam)
    const insertKept = (executor: Executor) => insertPostedSubmissions(executor, kept.map(row))
    const result = (written: Set<string>) =>
      group.map((queued) => (queued.readAt === undefined || written.has(queued.id) ? queued.id : null))
    // Who listens was read with each post's form, before the transaction: nothing in it changes that.
    const targets = targetsOfListeners(kept)
    const statements = [guarded, spam, kept].filter((rows) => rows.length > 0).length
    if (targets === null && statements === 1) {
      // One statement is atomic on its own. Without BEGIN and COMMIT, SQLite keeps no statement
      // journal for it (a submission's, with 8 KiB pages, spills to a temporary file that is
      // created and deleted each time) and PostgreSQL saves two round trips.
      if (guarded.length > 0) return result(ids(await insertGuarded(guarded)))
      await (kept.length > 0 ? insertKept(db) : insertSpam(db))
      return result(new Set())
    }
    // The submissions and their notifications commit together, or none does. Spam notifies no one.
    let written = new Set<string>()
    const notified = await db.transaction().execute(async (trx) => {
      if (guarded.length > 0) written = ids(await insertGuardedRows(trx, guarded))
      if (spam.length > 0) await insertSpam(trx)
      if (kept.length === 0) return 0
      await insertKept(trx)
      return recordSubmissionsCreated(
        trx,
        kept.map((queued) => queued.id),
        targets,
        new Date(clock()),
      )
    })
    if (notified > 0) outboxWritten()
    return result(written)
  }
  const posts = createGroupCommit(writePosts)

  const service = {
    /** The form with its intake settings, or null when there is no such form. */
    form,

    /** The form a post goes to, with who listens to its new submissions, for `accept`. */
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
        const row = await findFormIntake(trx, formId)
        if (row === undefined) throw new NotFoundError(`Form '${formId}' not found`)
        const before = parseStoredIntake(row.intake)
        const changed = (Object.keys(settings) as (keyof IntakeSettings)[]).filter(
          (key) => JSON.stringify(before[key]) !== JSON.stringify(settings[key]),
        )
        await setFormIntake(trx, formId, JSON.stringify(settings), formatTimestamp(new Date(clock())))
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
     * read with the form: the group writes the notifications they owe. With `read` (the form as
     * `formForPost` gave it), a plain post is stored only if the form is still as read, and a
     * `FormReadStale` says it changed, before anything was written.
     */
    async accept(
      formId: string,
      post: IntakePost,
      listeners: FormListeners,
      read?: Pick<PostingForm, 'readAt' | 'remembered'>,
    ): Promise<string> {
      const plain = !post.spam && !listeners.allForms && !listeners.thisForm
      // A remembered form is not enough to store spam by, which no insert checks: read it again.
      if (read?.remembered === true && !plain) throw new FormReadStale()
      const id = await posts.write({
        id: newId('submission'),
        formId,
        post,
        at: formatTimestamp(new Date(clock())),
        listeners,
        ...(read !== undefined && plain ? { readAt: read.readAt } : {}),
      })
      if (id !== null) return id
      remembered.delete(formId)
      throw new FormReadStale()
    },

    /** Resolves once every post accepted so far is committed (for an orderly shutdown). */
    drained: () => posts.drained(),

    /** How many caught posts a form has in its spam, for the dashboard and for checks. */
    async spamCount(formId: string): Promise<number> {
      return countSpamOfForm(db, formId)
    },

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
