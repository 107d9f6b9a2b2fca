import type { Kysely } from 'kysely'
import {
  activeFlag,
  deleteRedirectRow,
  findRedirectById,
  findRedirectIdFrom,
  insertRedirect,
  type RedirectRow,
  updateRedirectRow,
} from '../../db/repositories/redirects.js'
import type { Database } from '../../db/tables.js'
import { NotFoundError } from '../../errors.js'
import { newId } from '../../ids.js'
import { checkRedirectInput, presentRedirect, type RedirectInput } from '../../resources/redirect.js'
import { redirectPathForEntry } from '../../resources/redirect-path.js'
import type { Redirect } from '../../schemas.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { FieldValidationError } from '../content-admin.js'
import { chainsThrough, loopSentence, walkFrom } from './routes.js'
import { locked } from './transactions.js'

/**
 * What a change left behind: the redirect, and the chains it now takes part in (worth flattening),
 * described (`/a → /b → /c`). At most `LISTED_CHANGE_CHAINS` are listed; `moreChains` says
 * whether there are others.
 */
export interface RedirectChange {
  redirect: Redirect
  chains: string[]
  moreChains: boolean
}

export async function getRedirect(db: Kysely<Database>, id: string): Promise<Redirect> {
  const row = await findRedirectById(db, id)
  if (!row) throw new NotFoundError(`Redirect '${id}' not found`)
  return presentRedirect(row)
}

/** A redirect as its edit form shows it: paths as a person types them (a literal `%` as `%25`). */
export async function getRedirectForEditing(db: Kysely<Database>, id: string): Promise<Redirect> {
  const redirect = await getRedirect(db, id)
  return {
    ...redirect,
    fromPath: redirectPathForEntry(redirect.fromPath),
    toPath: redirectPathForEntry(redirect.toPath),
  }
}

/**
 * Creates the redirect (`id` undefined) or replaces redirect `id`'s paths, type and active flag:
 * a `ValidationError` says what is wrong with it (path, duplicate, loop).
 */
export function writeRedirect(
  db: Kysely<Database>,
  id: string | undefined,
  input: RedirectInput,
  actor: Actor,
): Promise<RedirectChange> {
  const { value, problems, fields } = checkRedirectInput(input)
  if (problems.length > 0) throw new FieldValidationError(fields)
  return locked(db, async (trx) => {
    const current = id === undefined ? undefined : await findRedirectById(trx, id)
    if (id !== undefined && !current) throw new NotFoundError(`Redirect '${id}' not found`)
    const holder = await findRedirectIdFrom(trx, value.fromPath)
    if (holder && holder.id !== id)
      throw new FieldValidationError({
        fromPath: `A redirect from ${value.fromPath} already exists; edit that one instead`,
      })
    const { loop, active } = await walkFrom(trx, value, id ?? '')
    if (loop) {
      // The path that closes the loop is where it goes: the problem is said beside that field.
      throw new FieldValidationError({ toPath: loopSentence(loop) })
    }

    const timestamp = now()
    const fields = {
      from_path: value.fromPath,
      to_path: value.toPath,
      type: value.type,
      is_active: activeFlag(value.isActive),
      updated_at: timestamp,
    }
    let row: RedirectRow
    if (current) {
      await updateRedirectRow(trx, current.id, fields)
      row = { ...current, ...fields }
    } else {
      row = { id: newId('redirect'), ...fields, created_at: timestamp }
      await insertRedirect(trx, row)
    }
    await recordAudit(trx, {
      actor,
      action: current ? 'redirect.updated' : 'redirect.created',
      target: row.id,
      detail: {
        fromPath: value.fromPath,
        toPath: value.toPath,
        type: value.type,
        isActive: value.isActive,
      },
    })
    const { chains, more } = value.isActive ? await chainsThrough(trx, active) : { chains: [], more: false }
    return { redirect: presentRedirect(row), chains, moreChains: more }
  })
}

/** Switches a redirect on or off. Loops were checked across inactive ones too, so none can appear. */
export function setRedirectActive(
  db: Kysely<Database>,
  id: string,
  active: boolean,
  actor: Actor,
): Promise<RedirectChange> {
  return locked(db, async (trx) => {
    const current = await findRedirectById(trx, id)
    if (!current) throw new NotFoundError(`Redirect '${id}' not found`)
    const fields = { is_active: activeFlag(active), updated_at: now() }
    await updateRedirectRow(trx, id, fields)
    await recordAudit(trx, {
      actor,
      action: 'redirect.updated',
      target: id,
      detail: { fromPath: current.from_path, isActive: active },
    })
    const row = { ...current, ...fields }
    if (!active) return { redirect: presentRedirect(row), chains: [], moreChains: false }
    const value = { fromPath: row.from_path, toPath: row.to_path, type: row.type, isActive: true }
    const { active: forward } = await walkFrom(trx, value, row.id)
    const { chains, more } = await chainsThrough(trx, forward)
    return { redirect: presentRedirect(row), chains, moreChains: more }
  })
}

export function deleteRedirect(db: Kysely<Database>, id: string, actor: Actor): Promise<Redirect> {
  return locked(db, async (trx) => {
    const current = await findRedirectById(trx, id)
    if (!current) throw new NotFoundError(`Redirect '${id}' not found`)
    await deleteRedirectRow(trx, id)
    await recordAudit(trx, {
      actor,
      action: 'redirect.deleted',
      target: id,
      detail: { fromPath: current.from_path, toPath: current.to_path },
    })
    return presentRedirect(current)
  })
}
