import type { Kysely, Selectable } from 'kysely'
import {
  deleteFormRow,
  findFormById,
  formPosition,
  insertForm,
  updateFormRow,
} from '../../db/repositories/forms.js'
import { countSubmissionsOfForm } from '../../db/repositories/submissions.js'
import type { Database, FormsTable } from '../../db/tables.js'
import { NotFoundError } from '../../errors.js'
import { newId } from '../../ids.js'
import { type FormInput, readFormInput } from '../../resources/form.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { createFormCounts, type FormCounts } from '../form-counts.js'
import { differences, flag, refuseWrongFields, type Saved } from './changes.js'

/** A form as the dashboard lists it: the API's fields plus the hidden flag and the submission count. */
export interface AdminForm {
  id: string
  title: string
  description: string | null
  isActive: boolean
  submissionCount: number
  /** Submissions not yet marked as read (kept by the database's triggers, migration 011). */
  unreadCount: number
  createdAt: string
}

/** A form's row and its counts as the dashboard shows the form. */
export function toAdminForm(
  row: Pick<Selectable<FormsTable>, 'id' | 'title' | 'description' | 'is_active' | 'created_at'>,
  counts: FormCounts = { total: 0, unread: 0 },
): AdminForm {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    isActive: Number(row.is_active) === 1,
    submissionCount: counts.total,
    unreadCount: counts.unread,
    createdAt: row.created_at,
  }
}

/** A form as given, checked by the form's reader, or a `FieldValidationError`. */
function checkForm(input: FormInput) {
  const { value, fields } = readFormInput(input)
  refuseWrongFields(fields)
  return value
}

/** The dashboard's changes to forms; each change and its audit entry are one transaction. */
export function createFormAdmin(db: Kysely<Database>) {
  const formCounts = createFormCounts(db)

  const getForm = async (id: string): Promise<AdminForm> => {
    const row = await findFormById(db, id)
    if (!row) throw new NotFoundError(`Form '${id}' not found`)
    return toAdminForm(row, (await formCounts([id])).get(id))
  }

  return {
    getForm,

    /** Where a form sits in the list of forms (0 for the first): the list page to show it on. */
    formPosition: (id: string) => formPosition(db, id),

    /** Creates a form; a `FieldValidationError` says what is wrong with which field. */
    createForm: async (input: FormInput, actor: Actor = 'cli'): Promise<AdminForm> => {
      const value = checkForm(input)
      const timestamp = now()
      const id = newId('form')
      await db.transaction().execute(async (trx) => {
        await insertForm(trx, {
          id,
          title: value.title,
          description: value.description,
          is_active: flag(value.isActive),
          created_at: timestamp,
          updated_at: timestamp,
        })
        await recordAudit(trx, { actor, action: 'form.created', target: id, detail: value })
      })
      return getForm(id)
    },

    /**
     * Replaces a form's title, description and active flag, under the rules of creating one. A save
     * that changes nothing writes nothing (and so records nothing, and leaves caches warm).
     */
    updateForm: async (id: string, input: FormInput, actor: Actor = 'cli'): Promise<Saved<AdminForm>> => {
      const value = checkForm(input)
      const changed = await db.transaction().execute(async (trx) => {
        const row = await findFormById(trx, id)
        if (!row) throw new NotFoundError(`Form '${id}' not found`)
        const current = { title: row.title, description: row.description, isActive: row.is_active === 1 }
        const { changed, after, before } = differences(current, value)
        if (changed.length === 0) return changed
        await updateFormRow(trx, id, {
          title: value.title,
          description: value.description,
          is_active: flag(value.isActive),
          updated_at: now(),
        })
        await recordAudit(trx, {
          actor,
          action: 'form.updated',
          target: id,
          detail: { ...after, previous: before },
        })
        return changed
      })
      return { item: await getForm(id), changed }
    },

    /**
     * Deletes a form and, through the foreign key's cascade, every submission to it. Returns the
     * form as it was and how many submissions went with it (the audit entry records both).
     */
    deleteForm: (
      id: string,
      actor: Actor = 'cli',
    ): Promise<{ form: AdminForm; deletedSubmissions: number }> =>
      db.transaction().execute(async (trx) => {
        const row = await findFormById(trx, id)
        if (!row) throw new NotFoundError(`Form '${id}' not found`)
        const deletedSubmissions = await countSubmissionsOfForm(trx, id)
        await deleteFormRow(trx, id)
        await recordAudit(trx, {
          actor,
          action: 'form.deleted',
          target: id,
          detail: { title: row.title, deletedSubmissions },
        })
        return { form: toAdminForm(row, { total: deletedSubmissions, unread: 0 }), deletedSubmissions }
      }),

    /** Switches a form on or off; the API's `active` filter follows at once. */
    setFormActive: async (id: string, active: boolean, actor: Actor = 'cli'): Promise<AdminForm> => {
      await db.transaction().execute(async (trx) => {
        const found = await updateFormRow(trx, id, { is_active: flag(active), updated_at: now() })
        if (!found) throw new NotFoundError(`Form '${id}' not found`)
        await recordAudit(trx, { actor, action: 'form.updated', target: id, detail: { isActive: active } })
      })
      return getForm(id)
    },
  }
}
