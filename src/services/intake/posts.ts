import type { Executor } from '../../db/executor.js'
import { createGroupCommit } from '../../db/group-commit.js'
import type { DatabaseHandle } from '../../db/handle.js'
import {
  insertGuardedRows,
  insertPostedSubmissions,
  prepareGuardedInserts,
} from '../../db/repositories/intake-posts.js'
import { insertSpamSubmissions } from '../../db/repositories/spam-submissions.js'
import { newId } from '../../ids.js'
import type { PostedValue } from '../../resources/form.js'
import { formatTimestamp } from '../../time.js'
import {
  type FormListeners,
  outboxWritten,
  recordSubmissionsCreated,
  targetsOfListeners,
} from '../notifications/outbox.js'
import type { PostingForm, PostingForms } from './forms.js'

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

const ids = (rows: readonly { id: string }[]) => new Set(rows.map((row) => row.id))

/**
 * Stores accepted posts: those arriving together share one statement or one transaction
 * (`db/group-commit.ts`), with the notifications they owe.
 */
export function createPostWriter(
  database: Pick<DatabaseHandle, 'db' | 'prepare'>,
  forms: PostingForms,
  clock: () => number,
) {
  const db = database.db
  // A plain post's insert, prepared once per size of group (see `prepareGuardedInserts`).
  const insertGuarded = prepareGuardedInserts(database)

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

  return {
    /**
     * Stores one accepted post and returns its id once it is committed; spam goes to its own table.
     * `listeners` are those read with the form: the group writes the notifications they owe. With
     * `read` (the form as `formForPost` gave it), a plain post is stored only if the form is still
     * as read, and a `FormReadStale` says it changed, before anything was written.
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
      forms.forget(formId)
      throw new FormReadStale()
    },

    /** Resolves once every post accepted so far is committed (for an orderly shutdown). */
    drained: () => posts.drained(),
  }
}
