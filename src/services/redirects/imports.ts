import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Kysely, Transaction } from 'kysely'
import type { Executor } from '../../db/executor.js'
import {
  activeFlag,
  type RedirectRow,
  redirectBatches,
  redirectsFrom,
  upsertRedirects,
} from '../../db/repositories/redirects.js'
import type { Database } from '../../db/tables.js'
import { firstAndRemainder, ValidationError } from '../../errors.js'
import { newId } from '../../ids.js'
import { now } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'
import { type CsvRow, type LineProblem, readCsv } from './csv.js'
import { ROWS_PER_TURN, WRITE_BATCH } from './pacing.js'
import { describeLoop, RedirectGraph, resolveYielding } from './rules.js'
import { bulkCommit, optimistic } from './transactions.js'

/** More problems than this in one import are summarised rather than listed. */
const MAX_LISTED_PROBLEMS = 50

export interface RedirectImportResult {
  created: number
  updated: number
  unchanged: number
  /** How many active redirects form chains after the import. */
  chainCount: number
}

function importError(problems: string[]): ValidationError {
  const listed = firstAndRemainder(problems, MAX_LISTED_PROBLEMS, 'problem')
  return new ValidationError(`The file was not imported: ${listed.join('; ')}`, listed)
}

/**
 * Checks the file's redirects against every stored one: every loop they would close is a problem
 * on its row's line. Returns how many active redirects would form chains.
 */
async function checkImport(
  reader: Executor,
  valid: CsvRow[],
  inFile: Map<string, CsvRow>,
  problems: LineProblem[],
): Promise<number> {
  // Loops count inactive redirects too: activating one later must not be able to close a loop.
  // Both graphs number the paths in one table: each path is stored and looked up once.
  const all = new RedirectGraph()
  const active = new RedirectGraph(all.paths)
  const add = (fromPath: string, toPath: string, isActive: boolean) => {
    const from = all.paths.intern(fromPath)
    const to = all.paths.intern(toPath)
    all.addNodes(from, to)
    if (isActive) active.addNodes(from, to)
  }
  for await (const batch of redirectBatches(reader)) {
    for (const row of batch) {
      if (!inFile.has(row.from_path)) add(row.from_path, row.to_path, Number(row.is_active) === 1)
    }
  }
  for (const [index, { value }] of valid.entries()) {
    if (index % ROWS_PER_TURN === 0) await nextTurn()
    add(value.fromPath, value.toPath, value.isActive)
  }
  await resolveYielding(all)
  const found = [...problems]
  for (const loop of all.loops()) {
    const row = loop
      .slice(0, -1)
      .map((path) => inFile.get(path))
      .filter((candidate) => candidate !== undefined)
      .sort((a, b) => a.line - b.line)[0]
    // A loop among stored redirects alone predates this file; refusing it would not fix it.
    if (row === undefined) continue
    found.push({
      line: row.line,
      text: `line ${row.line}: this would make a redirect loop (${describeLoop(loop, row.value.fromPath)})`,
    })
  }
  if (found.length > 0) throw importError(found.sort((a, b) => a.line - b.line).map((p) => p.text))
  await resolveYielding(active)
  return active.chainCount()
}

/** Writes the file's new and changed redirects and the import's audit entry. */
async function writeImport(
  trx: Transaction<Database>,
  valid: CsvRow[],
  chainCount: number,
  actor: Actor,
): Promise<RedirectImportResult> {
  const timestamp = now()
  const result = { created: 0, updated: 0, unchanged: 0, chainCount }
  const changed: RedirectRow[] = []
  for (let i = 0; i < valid.length; i += WRITE_BATCH) {
    // SQLite answers synchronously: without a turn between statements nothing else would run.
    await nextTurn()
    const batch = valid.slice(i, i + WRITE_BATCH)
    const existing = new Map(
      (
        await redirectsFrom(
          trx,
          batch.map(({ value }) => value.fromPath),
        )
      ).map((row) => [row.from_path, row]),
    )
    for (const { value } of batch) {
      const current = existing.get(value.fromPath)
      const row: RedirectRow = {
        id: newId('redirect'),
        from_path: value.fromPath,
        to_path: value.toPath,
        type: value.type,
        is_active: activeFlag(value.isActive),
        created_at: timestamp,
        updated_at: timestamp,
      }
      if (!current) result.created++
      else if (
        current.to_path === row.to_path &&
        current.type === row.type &&
        Number(current.is_active) === row.is_active
      ) {
        result.unchanged++
        continue
      } else result.updated++
      changed.push(row)
    }
  }
  for (let i = 0; i < changed.length; i += WRITE_BATCH) {
    await upsertRedirects(trx, changed.slice(i, i + WRITE_BATCH))
    await nextTurn()
  }
  await recordAudit(trx, {
    actor,
    action: 'redirects.imported',
    target: 'redirects',
    detail: { ...result },
  })
  return result
}

/**
 * Adds and updates redirects from CSV, all or nothing: rows are matched to existing redirects by
 * `fromPath`; redirects missing from the file are left alone. The header names the columns
 * (`fromPath` and `toPath` required; `type` and `isActive` optional, defaulting to `permanent`
 * and `true`, and a row may leave them out). Every problem, loops included, is reported with
 * its line, and then nothing is written.
 */
export async function importRedirectsCsv(
  db: Kysely<Database>,
  text: string,
  actor: Actor,
): Promise<RedirectImportResult> {
  const { rows, problems } = await readCsv(text)
  // Rows with problems are left out of the loop check; the loops among the rest are reported too.
  const valid = rows.filter((row) => row.problems === 0)
  if (problems.length > 0 && valid.length === 0) throw importError(problems.map((p) => p.text))
  const inFile = new Map<string, CsvRow>()
  for (const row of valid) {
    if (inFile.size % ROWS_PER_TURN === 0) await nextTurn()
    inFile.set(row.value.fromPath, row)
  }
  return bulkCommit(
    db,
    () =>
      optimistic(
        db,
        (reader) => checkImport(reader, valid, inFile, problems),
        (trx, chainCount) => writeImport(trx, valid, chainCount, actor),
      ),
    ({ created, updated }) => created + updated,
  )
}
