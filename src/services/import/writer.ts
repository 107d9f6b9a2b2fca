import type { Insertable, Kysely, Transaction } from 'kysely'
import { BATCH_SIZE } from '../../db/batches.js'
import {
  ANALYZE_AFTER_ROWS,
  type BulkWriteOptions,
  refreshStatistics,
  storesBulkLoadsSorted,
  withBulkContentWrites,
  withCheckpointInWorker,
  withSubmissionsIndexRebuilt,
} from '../../db/bulk-writes.js'
import { UniqueViolationError } from '../../db/errors.js'
import {
  anySubmissionStored,
  type ContentTable,
  createdAtOfExisting,
  releaseStoredPaths,
  upsertQuery,
} from '../../db/repositories/imports.js'
import { SortedSubmissionLoad, type StagedRow } from '../../db/sorted-submission-load.js'
import { StatementTemplates } from '../../db/statement-templates.js'
import {
  CONTENT_TABLES,
  type Database,
  type Flag,
  type FormsTable,
  type PagesTable,
  type RedirectsTable,
  type SubmissionsTable,
} from '../../db/tables.js'
import { newId } from '../../ids.js'
import type { JsonObject } from '../../json.js'
import { type FormDraft, readForm } from '../../resources/form.js'
import { type PageDraft, readPage } from '../../resources/page.js'
import { type RedirectDraft, readRedirect } from '../../resources/redirect.js'
import { readSubmission, type SubmissionDraft } from '../../resources/submission.js'
import { now as currentTime } from '../../time.js'
import {
  recordStagedSubmissionsCreated,
  recordSubmissionsCreated,
  type SubmissionTargets,
  submissionTargets,
} from '../notifications/outbox.js'
import { BULK_SUBMISSIONS, KEPT_BATCH_SIZE } from './batches.js'
import { fileChangedError, ImportError } from './errors.js'
import { type KindCounts, zeroCounts } from './kinds.js'
import type { ImportPlan } from './plan.js'
import { RecordIndex } from './record-index.js'
import { SeenIds } from './seen-ids.js'
import type { RecordSource } from './sources.js'

/** The tables of the records the validating pass keeps in memory. */
type KeptTable = 'forms' | 'pages' | 'redirects'

/**
 * Writes a validated plan in one transaction: its forms, pages and redirects streamed from `source`
 * once more, then its submissions in another read. Returns how many rows each kind created and updated; on any
 * failure nothing is written. `also` runs last in the same transaction (the audit entry), with the counts.
 */
export async function writeImport(
  db: Kysely<Database>,
  plan: ImportPlan,
  source: RecordSource,
  also?: (trx: Kysely<Database>, result: { created: KindCounts; updated: KindCounts }) => Promise<void>,
  options: BulkWriteOptions = {},
): Promise<{ created: KindCounts; updated: KindCounts }> {
  const created = zeroCounts()
  const updated = zeroCounts()
  const timestamp = currentTime()
  try {
    await withCheckpointInWorker(db, () =>
      db.transaction().execute((trx) =>
        withBulkContentWrites(
          trx,
          CONTENT_TABLES,
          async () => {
            const writer = new Writer(trx, timestamp, created, updated)
            const writeSubmissionsOf = async (count: number): Promise<number> => {
              if (count === 0) return 0
              if (count < BULK_SUBMISSIONS) return writer.writeSubmissions(source, count, { sorted: false })
              // A sorted load reaches every index of submissions in its own key order (form,
              // creation time, id), which costs no more than a rebuild; rows in file order land at
              // random places, and rebuilding the indexes once afterwards beats maintaining them.
              if (storesBulkLoadsSorted(options))
                return writer.writeSubmissions(source, count, { sorted: true })
              return withSubmissionsIndexRebuilt(trx, () =>
                writer.writeSubmissions(source, count, { sorted: false }),
              )
            }
            if (plan.forms.size + plan.pages.size + plan.redirects.size > 0) {
              await writer.releasePaths('pages', plan.pages)
              await writer.releasePaths('redirects', plan.redirects)
              await writer.writeKept(source, plan)
            }
            const written = await writeSubmissionsOf(plan.counts.submissions)
            if (written !== plan.counts.submissions) throw fileChangedError()
            for (const table of ['forms', 'pages', 'redirects'] as const) {
              updated[table] = plan.counts[table] - created[table]
            }
            await source.assertUnchanged?.()
            await also?.(trx, { created, updated })
          },
          options,
        ),
      ),
    )
  } catch (error) {
    if (error instanceof ImportError) throw error
    if (error instanceof UniqueViolationError) {
      throw new ImportError([
        `the database changed while importing (a path or id this import uses was taken meanwhile); run the import again`,
      ])
    }
    throw error
  }
  const changed = CONTENT_TABLES.filter((table) => plan.counts[table] >= ANALYZE_AFTER_ROWS)
  if (changed.length > 0) await refreshStatistics(db, changed)
  return { created, updated }
}

interface Timestamped {
  createdAt?: string
  updatedAt?: string
}

/** A row's timestamps, completed from the record, the row it replaces and the time of the import. */
interface RowStamps {
  created_at: string
  updated_at: string
}

const flag = (value: boolean): Flag => (value ? 1 : 0)

const formRow = (draft: FormDraft, stamps: RowStamps): Insertable<FormsTable> => ({
  id: draft.id ?? newId('form'),
  title: draft.title,
  description: draft.description,
  is_active: flag(draft.isActive),
  // Null leaves a stored form's intake as it is (see upsertQuery).
  intake: draft.intake === undefined ? null : JSON.stringify(draft.intake),
  ...stamps,
})

const pageRow = (draft: PageDraft, stamps: RowStamps): Insertable<PagesTable> => ({
  id: draft.id ?? newId('page'),
  title: draft.title,
  slug: draft.slug,
  path: draft.path,
  page_type: draft.pageType,
  is_published: flag(draft.isPublished),
  // A published page always has a publication time; its creation is the best guess.
  published_at: draft.publishedAt ?? (draft.isPublished ? stamps.created_at : null),
  ...stamps,
})

const redirectRow = (draft: RedirectDraft, stamps: RowStamps): Insertable<RedirectsTable> => ({
  id: draft.id ?? newId('redirect'),
  from_path: draft.fromPath,
  to_path: draft.toPath,
  type: draft.type,
  is_active: flag(draft.isActive),
  ...stamps,
})

/** A submission without an id gets one here: the validating pass does not keep submissions. */
const submissionRow = (draft: SubmissionDraft, stamps: RowStamps): Insertable<SubmissionsTable> => ({
  id: draft.id ?? newId('submission'),
  form_id: draft.formId,
  data: JSON.stringify(draft.data),
  ip_address: draft.ipAddress,
  user_agent: draft.userAgent,
  referrer: draft.referrer,
  submitted_by: draft.submittedBy,
  is_read: flag(draft.isRead),
  is_starred: flag(draft.isStarred),
  notes: draft.notes,
  ...stamps,
})

/**
 * Writes validated records inside the import's transaction, in multi-row upserts. A record without
 * `createdAt` keeps the creation time of the row it replaces, so re-importing an export is harmless.
 */
class Writer {
  /** The upserts' and the stage's statements, each compiled once per row count and columns. */
  private readonly statements: StatementTemplates
  private targets: SubmissionTargets | null | undefined

  constructor(
    private readonly trx: Transaction<Database>,
    private readonly now: string,
    private readonly created: KindCounts,
    private readonly updated: KindCounts,
  ) {
    this.statements = new StatementTemplates(trx)
  }

  /**
   * Moves the paths of the stored pages or redirects this import replaces out of the way, to a
   * placeholder no real path can be (`//replaced/<id>`), so that paths can move between them (a
   * swap then breaks no unique index). The rows stay, with their creation times, until their
   * records overwrite them.
   */
  async releasePaths(table: 'pages' | 'redirects', kept: RecordIndex<string>): Promise<void> {
    let ids: string[] = []
    const release = async () => {
      if (ids.length === 0) return
      await releaseStoredPaths(this.trx, table, ids)
      ids = []
    }
    for (const id of kept.givenIds()) {
      ids.push(id)
      if (ids.length >= BATCH_SIZE) await release()
    }
    await release()
  }

  /**
   * Streams the forms, pages and redirects of `source` into the database, in multi-row upserts.
   * Only the record the plan kept for each id (its last) is written, so an earlier record of the
   * same id never holds a path meanwhile. Counts what each kind created; the rest were updates.
   */
  async writeKept(source: RecordSource, plan: ImportPlan): Promise<void> {
    const writers = {
      form: this.keptWriter('forms', plan.forms, readForm, formRow),
      page: this.keptWriter('pages', plan.pages, readPage, pageRow),
      redirect: this.keptWriter('redirects', plan.redirects, readRedirect, redirectRow),
    }
    // Orders grow in file order: past the last kept record only submissions are left, which the
    // next read writes, so this read stops there (an export lists its forms before its submissions).
    const last = Math.max(plan.forms.lastOrder(), plan.pages.lastOrder(), plan.redirects.lastOrder())
    reading: for await (const entries of source.entries()) {
      for (const entry of entries) {
        if (entry.location.order > last) break reading
        if ('problem' in entry) throw fileChangedError()
        if (entry.kind !== 'submission') await writers[entry.kind].offer(entry.record, entry.location.order)
      }
    }
    for (const writer of Object.values(writers)) await writer.flush()
  }

  /** Queues one kept table's records and writes them a batch at a time. */
  private keptWriter<T extends KeptTable, D extends Timestamped & { id?: string }>(
    table: T,
    kept: RecordIndex<string>,
    read: (record: JsonObject) => { draft: D; problems: unknown[] },
    toRow: (draft: D, stamps: RowStamps) => Insertable<Database[T]>,
  ) {
    let drafts: D[] = []
    const flush = async () => {
      if (drafts.length === 0) return
      const batch = drafts
      drafts = []
      const given = batch.flatMap((draft) => (draft.id === undefined ? [] : [draft.id]))
      const existing = await createdAtOfExisting(this.trx, table, given)
      this.created[table] += batch.length - existing.size
      await this.upsert(
        table,
        batch.map((draft) =>
          toRow(draft, this.stamps(draft, draft.id === undefined ? undefined : existing.get(draft.id))),
        ),
      )
    }
    return {
      flush,
      async offer(record: JsonObject, order: number): Promise<void> {
        const { draft, problems } = read(record)
        if (problems.length > 0) throw fileChangedError()
        if (!kept.isKept(RecordIndex.key(draft.id, order), order)) return
        drafts.push(draft)
        if (drafts.length >= KEPT_BATCH_SIZE) await flush()
      },
    }
  }

  /**
   * Streams the submissions of `source` into the database and returns how many were written. Each
   * record is validated again: the file was read once already, and must not have changed since.
   */
  async writeSubmissions(
    source: RecordSource,
    expected: number,
    { sorted }: { sorted: boolean },
  ): Promise<number> {
    // A row can exist already only if the table had rows before, or if an earlier record of this
    // file wrote it: into an empty table only the ids the filter may have seen are looked up.
    const stored = await anySubmissionStored(this.trx)
    const seen = new SeenIds(expected)
    const load = sorted ? await SortedSubmissionLoad.open(this.trx, this.now) : undefined
    let written = 0
    let batch: SubmissionDraft[] = []
    const idsInBatch = new Set<string>()
    const flush = async () => {
      if (batch.length === 0) return
      if (load) await this.stageSubmissionBatch(batch, load, stored, (id) => seen.mayHave(id))
      else await this.writeSubmissionBatch(batch, (id) => stored || seen.mayHave(id))
      for (const id of idsInBatch) seen.add(id)
      written += batch.length
      batch = []
      idsInBatch.clear()
    }
    for await (const entries of source.entries()) {
      for (const entry of entries) {
        if ('problem' in entry) throw fileChangedError()
        if (entry.kind !== 'submission') continue
        const { draft, problems } = readSubmission(entry.record)
        if (problems.length > 0) throw fileChangedError()
        // One statement must not upsert the same row twice (PostgreSQL refuses it), and the later
        // record must win, so a repeated id starts a new batch.
        if (draft.id !== undefined) {
          if (idsInBatch.has(draft.id)) await flush()
          idsInBatch.add(draft.id)
        }
        batch.push(draft)
        if (batch.length >= BATCH_SIZE) await flush()
      }
    }
    await flush()
    await load?.finish({ created: this.created, updated: this.updated }, async (stage) =>
      recordStagedSubmissionsCreated(this.trx, stage, await this.notified()),
    )
    return written
  }

  /**
   * Stages `drafts` for a sorted load. Stamps and counts are those of writing each record in turn,
   * except for a record whose id an earlier record of the file had: `mayRepeat` says which ids
   * might be such, and the load folds those that are when it finishes.
   */
  private async stageSubmissionBatch(
    drafts: SubmissionDraft[],
    load: SortedSubmissionLoad,
    stored: boolean,
    mayRepeat: (id: string) => boolean,
  ): Promise<void> {
    const given = stored ? drafts.flatMap((draft) => (draft.id === undefined ? [] : [draft.id])) : []
    const existing = await createdAtOfExisting(this.trx, 'submissions', given)
    this.updated.submissions += existing.size
    this.created.submissions += drafts.length - existing.size
    const rows = drafts.map((draft): StagedRow => {
      const before = draft.id === undefined ? undefined : existing.get(draft.id)
      if (draft.id !== undefined && mayRepeat(draft.id)) load.suspect(draft.id)
      return {
        seq: load.nextSeq(),
        ...submissionRow(draft, this.stamps(draft, before)),
        created_given: flag(draft.createdAt !== undefined),
        updated_given: flag(draft.updatedAt !== undefined),
        existed: flag(before !== undefined),
      }
    })
    await this.statements.run(`stage:${SortedSubmissionLoad.table}`, rows, (built) => load.insertQuery(built))
  }

  /** Writes `drafts`; `mayExist` says which given ids the database must be asked about. */
  private async writeSubmissionBatch(
    drafts: SubmissionDraft[],
    mayExist: (id: string) => boolean,
  ): Promise<void> {
    const given = drafts.flatMap((draft) => (draft.id !== undefined && mayExist(draft.id) ? [draft.id] : []))
    const existing = await createdAtOfExisting(this.trx, 'submissions', given)
    this.updated.submissions += existing.size
    this.created.submissions += drafts.length - existing.size
    const rows = drafts.map((draft) =>
      submissionRow(draft, this.stamps(draft, draft.id === undefined ? undefined : existing.get(draft.id))),
    )
    await this.upsert('submissions', rows)
    const targets = await this.notified()
    if (targets !== null)
      await recordSubmissionsCreated(
        this.trx,
        rows.flatMap((row) => (existing.has(row.id) ? [] : [row.id])),
        targets,
      )
  }

  /** Which forms' new submissions are notified of; read once per import (null: none). */
  private async notified(): Promise<SubmissionTargets | null> {
    if (this.targets === undefined) this.targets = await submissionTargets(this.trx)
    return this.targets
  }

  /**
   * Inserts `rows`, or overwrites every column of the row with the same id. The statement for a
   * table, a number of rows and their columns is built and compiled once and then run with each
   * batch's values: building and compiling a query of 500 rows anew took longer than SQLite's
   * writing of them.
   */
  private async upsert<T extends ContentTable>(table: T, rows: Insertable<Database[T]>[]): Promise<void> {
    await this.statements.run(`upsert:${table}`, rows, (built) =>
      upsertQuery(this.trx, table, built as Insertable<Database[T]>[]),
    )
  }

  /**
   * `createdAt` defaults to the replaced row's, else now; `updatedAt` to now, the time of the import
   * (a missing timestamp is now, whatever the record's other one says).
   */
  private stamps(draft: Timestamped, existingCreatedAt: string | undefined): RowStamps {
    return {
      created_at: draft.createdAt ?? existingCreatedAt ?? this.now,
      updated_at: draft.updatedAt ?? this.now,
    }
  }
}
