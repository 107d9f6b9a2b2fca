import type { Kysely } from 'kysely'
import {
  findSubmissionById,
  findSubmissionFormId,
  updateSubmissionRow,
} from '../../db/repositories/submissions.js'
import type { Database } from '../../db/tables.js'
import { NotFoundError, ValidationError } from '../../errors.js'
import { presentSubmission, readNotes, type Submission } from '../../resources/submission.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { flag } from './changes.js'

/** The dashboard's changes to one submission's flags and notes, each audited in its transaction. */
export function createSubmissionAdmin(db: Kysely<Database>) {
  return {
    /** The form a submission belongs to; a `NotFoundError` when there is no such submission. */
    findSubmissionForm: async (id: string): Promise<{ formId: string }> => {
      const row = await findSubmissionFormId(db, id)
      if (!row) throw new NotFoundError(`Submission '${id}' not found`)
      return { formId: row.form_id }
    },

    /**
     * Changes the administrators' flags and notes on a submission (the submitted data itself never
     * changes). Blank notes are stored as null. Returns the submission and its form's id.
     */
    updateSubmission: (
      id: string,
      change: { isRead?: boolean; isStarred?: boolean; notes?: string | null },
      actor: Actor = 'cli',
    ): Promise<{ formId: string; submission: Submission }> => {
      const { notes, problem } = readNotes(change.notes)
      if (problem !== null) throw new ValidationError(problem)
      return db.transaction().execute(async (trx) => {
        const row = await findSubmissionById(trx, id)
        if (!row) throw new NotFoundError(`Submission '${id}' not found`)
        const update = {
          ...(change.isRead === undefined ? {} : { is_read: flag(change.isRead) }),
          ...(change.isStarred === undefined ? {} : { is_starred: flag(change.isStarred) }),
          ...(notes === undefined ? {} : { notes }),
          updated_at: now(),
        }
        await updateSubmissionRow(trx, id, update)
        // Which fields changed, not the notes themselves: they may hold personal data.
        await recordAudit(trx, {
          actor,
          action: 'submission.updated',
          target: id,
          detail: {
            formId: row.form_id,
            ...(change.isRead === undefined ? {} : { isRead: change.isRead }),
            ...(change.isStarred === undefined ? {} : { isStarred: change.isStarred }),
            ...(notes === undefined ? {} : { notesChanged: true }),
          },
        })
        return { formId: row.form_id, submission: presentSubmission({ ...row, ...update }) }
      })
    },
  }
}
