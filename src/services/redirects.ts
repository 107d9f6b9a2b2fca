import { CsvError, parse } from 'csv-parse/sync'
import { stringify } from 'csv-stringify/sync'
import type { Kysely, Selectable, Transaction } from 'kysely'
import { guarded, isUniqueViolation } from '../db/client.js'
import { takeLock } from '../db/locks.js'
import { presentRedirect } from '../db/repositories/content.js'
import type { Database, RedirectsTable } from '../db/tables.js'
import { firstAndRemainder, NotFoundError, ValidationError } from '../errors.js'
import { newId } from '../ids.js'
import type { Redirect, RedirectType } from '../schemas.js'
import { now } from '../time.js'
import {
  findRedirectChains,
  findRedirectLoops,
  flattenRedirectChains,
  type RedirectChain,
  type RedirectEdge,
  redirectPathProblem,
} from './redirect-rules.js'

/** A redirect as a person enters it: in a form, or as a row of a CSV file. */
export interface RedirectInput {
  fromPath: string
  toPath: string
  /** `permanent` (301, the default) or `temporary` (302). */
  type?: string
  isActive?: boolean
}

/** What a change left behind: the redirect, and the chains it now takes part in (worth flattening). */
export interface RedirectChange {
  redirect: Redirect
  chains: RedirectChain[]
}

export interface RedirectImportResult {
  created: number
  updated: number
  unchanged: number
  /** Every chain among the active redirects after the import. */
  chains: RedirectChain[]
}

/** The columns of the CSV format, in the order `exportCsv` writes them. */
export const CSV_COLUMNS = ['fromPath', 'toPath', 'type', 'isActive'] as const
/** More problems than this in one import are summarised rather than listed. */
const MAX_LISTED_PROBLEMS = 50
/** Rows per multi-row insert of an import. */
const INSERT_BATCH = 500

/** A redirect as entered, checked and normalised. */
interface RedirectValue {
  fromPath: string
  toPath: string
  type: RedirectType
  isActive: boolean
}

type Row = Selectable<RedirectsTable>

const edge = (row: Pick<Row, 'from_path' | 'to_path'>): RedirectEdge => ({
  fromPath: row.from_path,
  toPath: row.to_path,
})

/** Chains a client would actually follow: inactive redirects send nobody anywhere. */
const activeChains = (rows: readonly { from_path: string; to_path: string; is_active: number }[]) =>
  findRedirectChains(rows.filter((row) => Number(row.is_active) === 1).map(edge))

const involving = (chains: RedirectChain[], path: string) =>
  chains.filter((chain) => chain.fromPath === path || chain.via.includes(path))

export const describeChain = (chain: RedirectChain) =>
  [chain.fromPath, ...chain.via, chain.finalPath].join(' → ')

/**
 * Checks one redirect as entered; returns it normalised (paths trimmed, defaults applied) with every
 * problem found, each a sentence naming the field.
 */
function readRedirect(input: RedirectInput): { value: RedirectValue; problems: string[] } {
  const fromPath = input.fromPath.trim()
  const toPath = input.toPath.trim()
  const type = (input.type ?? '').trim() || 'permanent'
  const problems: string[] = []
  const fromProblem = fromPath === '' ? 'is required' : redirectPathProblem(fromPath)
  if (fromProblem) problems.push(`From path ${fromProblem}`)
  const toProblem = toPath === '' ? 'is required' : redirectPathProblem(toPath)
  if (toProblem) problems.push(`To path ${toProblem}`)
  if (type !== 'permanent' && type !== 'temporary')
    problems.push(`Type must be 'permanent' or 'temporary', not '${type}'`)
  return {
    value: { fromPath, toPath, type: type as RedirectType, isActive: input.isActive ?? true },
    problems,
  }
}

/** A loop (`[a, b, a]`) told from `path`, one of its paths: `[path, …, path]`. */
function loopFrom(loop: readonly string[], path: string): string {
  const start = loop.indexOf(path)
  const cycle = loop.slice(0, -1)
  const rotated = [...cycle.slice(start), ...cycle.slice(0, start)]
  return [...rotated, path].join(' → ')
}

/** The loops that `edges` hold through `fromPath`, as sentences. */
function loopsThrough(edges: readonly RedirectEdge[], fromPath: string): string[] {
  return findRedirectLoops(edges)
    .filter((loop) => loop.includes(fromPath))
    .map(
      (loop) =>
        `This would make a redirect loop (${loopFrom(loop, fromPath)}): clients would be sent round in circles. Point it at a path that does not redirect back.`,
    )
}

/**
 * Creating, changing and removing redirects under the rules of SPEC §2: paths that cannot be an
 * open redirect, unique `fromPath`, no loops (checked across all redirects, active or not, so that
 * activating one later cannot close a loop), and chains reported so they can be flattened.
 *
 * Writers take the `redirects` lock, so two changes made at once (on any instance) are checked
 * one after the other and cannot close a loop between them. Every write to redirects goes through
 * this file (see `content-admin.ts`).
 */
export function createRedirectService(db: Kysely<Database>) {
  /** Runs `work` holding the redirects lock, with every redirect loaded. */
  const locked = <T>(work: (trx: Transaction<Database>, rows: Row[]) => Promise<T>): Promise<T> =>
    guarded(async () => {
      try {
        return await db.transaction().execute(async (trx) => {
          await takeLock(trx, 'redirects')
          const rows = await trx
            .selectFrom('redirects')
            .selectAll()
            .orderBy('created_at')
            .orderBy('id')
            .execute()
          return work(trx, rows)
        })
      } catch (error) {
        // Only a writer that skips the lock (a bulk import) can take a path from under us.
        if (isUniqueViolation(error))
          throw new ValidationError('Another change took one of these paths meanwhile; please try again')
        throw error
      }
    })

  const write = (id: string | undefined, input: RedirectInput): Promise<RedirectChange> => {
    const { value, problems } = readRedirect(input)
    if (problems.length > 0) throw new ValidationError(problems.join('; '), problems)
    return locked(async (trx, rows) => {
      const current = id === undefined ? undefined : rows.find((row) => row.id === id)
      if (id !== undefined && !current) throw new NotFoundError(`Redirect '${id}' not found`)
      const others = rows.filter((row) => row.id !== id)
      if (others.some((row) => row.from_path === value.fromPath))
        throw new ValidationError(`A redirect from ${value.fromPath} already exists; edit that one instead`)
      const loops = loopsThrough([...others.map(edge), value], value.fromPath)
      if (loops.length > 0) throw new ValidationError(loops.join('; '), loops)

      const timestamp = now()
      const fields = {
        from_path: value.fromPath,
        to_path: value.toPath,
        type: value.type,
        is_active: value.isActive ? (1 as const) : (0 as const),
        updated_at: timestamp,
      }
      let row: Row
      if (current) {
        await trx.updateTable('redirects').set(fields).where('id', '=', current.id).execute()
        row = { ...current, ...fields }
      } else {
        row = { id: newId('redirect'), ...fields, created_at: timestamp }
        await trx.insertInto('redirects').values(row).execute()
      }
      return {
        redirect: presentRedirect(row),
        chains: involving(activeChains([...others, row]), row.from_path),
      }
    })
  }

  const getRedirect = (id: string): Promise<Redirect> =>
    guarded(async () => {
      const row = await db.selectFrom('redirects').selectAll().where('id', '=', id).executeTakeFirst()
      if (!row) throw new NotFoundError(`Redirect '${id}' not found`)
      return presentRedirect(row)
    })

  return {
    getRedirect,

    /** Creates a redirect; a `ValidationError` says what is wrong with it (path, duplicate, loop). */
    createRedirect: (input: RedirectInput) => write(undefined, input),

    /** Replaces a redirect's paths, type and active flag, under the same rules as creating one. */
    updateRedirect: (id: string, input: RedirectInput) => write(id, input),

    /** Switches a redirect on or off. Loops were checked across inactive ones too, so none can appear. */
    setRedirectActive: (id: string, active: boolean): Promise<RedirectChange> =>
      locked(async (trx, rows) => {
        const current = rows.find((row) => row.id === id)
        if (!current) throw new NotFoundError(`Redirect '${id}' not found`)
        const fields = { is_active: active ? (1 as const) : (0 as const), updated_at: now() }
        await trx.updateTable('redirects').set(fields).where('id', '=', id).execute()
        const row = { ...current, ...fields }
        const after = rows.map((other) => (other.id === id ? row : other))
        return { redirect: presentRedirect(row), chains: involving(activeChains(after), row.from_path) }
      }),

    deleteRedirect: (id: string): Promise<Redirect> =>
      locked(async (trx, rows) => {
        const current = rows.find((row) => row.id === id)
        if (!current) throw new NotFoundError(`Redirect '${id}' not found`)
        await trx.deleteFrom('redirects').where('id', '=', id).execute()
        return presentRedirect(current)
      }),

    /** Every chain among the active redirects (A → B → C), in the redirects' order. */
    findChains: (): Promise<RedirectChain[]> =>
      guarded(async () =>
        activeChains(
          await db
            .selectFrom('redirects')
            .select(['from_path', 'to_path', 'is_active'])
            .orderBy('created_at')
            .orderBy('id')
            .execute(),
        ),
      ),

    /**
     * Points every chained active redirect straight at where its chain ends, so that clients need
     * one hop. Returns how many redirects changed.
     */
    flattenChains: (): Promise<number> =>
      locked(async (trx, rows) => {
        const active = rows.filter((row) => Number(row.is_active) === 1).map(edge)
        const updates = flattenRedirectChains(active)
        const timestamp = now()
        for (const { fromPath, toPath } of updates) {
          await trx
            .updateTable('redirects')
            .set({ to_path: toPath, updated_at: timestamp })
            .where('from_path', '=', fromPath)
            .execute()
        }
        return updates.length
      }),

    /** Every redirect as CSV (`fromPath,toPath,type,isActive`), oldest first; `importCsv` reads it back. */
    exportCsv: (): Promise<string> =>
      guarded(async () => {
        const rows = await db
          .selectFrom('redirects')
          .selectAll()
          .orderBy('created_at')
          .orderBy('id')
          .execute()
        return stringify(
          rows.map((row) => [
            row.from_path,
            row.to_path,
            row.type,
            Number(row.is_active) === 1 ? 'true' : 'false',
          ]),
          { header: true, columns: [...CSV_COLUMNS] },
        )
      }),

    /**
     * Adds and updates redirects from CSV, all or nothing: rows are matched to existing redirects by
     * `fromPath`; redirects missing from the file are left alone. The header names the columns
     * (`fromPath` and `toPath` required; `type` and `isActive` optional, defaulting to `permanent`
     * and `true`). Every problem is reported with its line, and then nothing is written.
     */
    importCsv: (text: string): Promise<RedirectImportResult> => {
      const { rows, problems } = readCsv(text)
      if (problems.length > 0) throw importError(problems)
      return locked(async (trx, existing) => {
        const byPath = new Map(existing.map((row) => [row.from_path, row]))
        const inFile = new Set(rows.map((row) => row.value.fromPath))
        const after = [
          ...existing.filter((row) => !inFile.has(row.from_path)),
          ...rows.map(({ value }) => ({
            from_path: value.fromPath,
            to_path: value.toPath,
            is_active: value.isActive ? 1 : 0,
          })),
        ]
        const loopProblems = findRedirectLoops(after.map(edge)).flatMap((loop) => {
          const row = rows.find(({ value }) => loop.includes(value.fromPath))
          return row === undefined
            ? []
            : [`line ${row.line}: this would make a redirect loop (${loopFrom(loop, row.value.fromPath)})`]
        })
        if (loopProblems.length > 0) throw importError(loopProblems)

        const timestamp = now()
        const result = { created: 0, updated: 0, unchanged: 0 }
        const inserts: Row[] = []
        for (const { value } of rows) {
          const fields = {
            from_path: value.fromPath,
            to_path: value.toPath,
            type: value.type,
            is_active: value.isActive ? (1 as const) : (0 as const),
          }
          const current = byPath.get(value.fromPath)
          if (!current) {
            inserts.push({ id: newId('redirect'), ...fields, created_at: timestamp, updated_at: timestamp })
            result.created++
          } else if (
            current.to_path === fields.to_path &&
            current.type === fields.type &&
            Number(current.is_active) === fields.is_active
          ) {
            result.unchanged++
          } else {
            await trx
              .updateTable('redirects')
              .set({ ...fields, updated_at: timestamp })
              .where('id', '=', current.id)
              .execute()
            result.updated++
          }
        }
        for (let i = 0; i < inserts.length; i += INSERT_BATCH)
          await trx
            .insertInto('redirects')
            .values(inserts.slice(i, i + INSERT_BATCH))
            .execute()
        return { ...result, chains: activeChains(after) }
      })
    },
  }
}

function importError(problems: string[]): ValidationError {
  const listed = firstAndRemainder(problems, MAX_LISTED_PROBLEMS, 'problem')
  return new ValidationError(`The file was not imported: ${listed.join('; ')}`, listed)
}

/** Reads and checks CSV text; each row keeps its line number for messages. */
function readCsv(text: string) {
  const problems: string[] = []
  let records: { record: string[]; info: { lines: number } }[]
  try {
    records = parse(text, {
      bom: true,
      skip_empty_lines: true,
      info: true,
      relax_column_count: true,
    }) as unknown as typeof records
  } catch (error) {
    if (error instanceof CsvError)
      return { rows: [], problems: [`the file is not valid CSV: ${error.message}`] }
    throw error
  }
  const [header, ...body] = records
  if (!header)
    return { rows: [], problems: ['the file is empty: it needs a header line and one line per redirect'] }
  const known = new Map<string, (typeof CSV_COLUMNS)[number]>(CSV_COLUMNS.map((c) => [c.toLowerCase(), c]))
  const columns = header.record.map((name) => known.get(name.trim().toLowerCase()))
  header.record.forEach((name, index) => {
    if (columns[index] === undefined)
      problems.push(`line 1: unknown column '${name}' (the columns are ${CSV_COLUMNS.join(', ')})`)
  })
  for (const required of ['fromPath', 'toPath'] as const)
    if (!columns.includes(required)) problems.push(`line 1: the header has no '${required}' column`)
  if (problems.length > 0) return { rows: [], problems }
  if (body.length === 0) problems.push('the file has a header but no redirects')

  const rows: { line: number; value: RedirectValue }[] = []
  const firstLine = new Map<string, number>()
  for (const { record, info } of body) {
    const line = info.lines
    if (record.length !== columns.length) {
      problems.push(`line ${line}: expected ${columns.length} values, found ${record.length}`)
      continue
    }
    const cell = (column: (typeof CSV_COLUMNS)[number]) => {
      const index = columns.indexOf(column)
      return index === -1 ? '' : (record[index] ?? '')
    }
    const active = cell('isActive').trim().toLowerCase()
    if (active !== '' && active !== 'true' && active !== 'false')
      problems.push(`line ${line}: isActive must be 'true' or 'false', not '${cell('isActive')}'`)
    const { value, problems: found } = readRedirect({
      fromPath: cell('fromPath'),
      toPath: cell('toPath'),
      type: cell('type'),
      isActive: active !== 'false',
    })
    for (const problem of found) problems.push(`line ${line}: ${problem}`)
    const earlier = firstLine.get(value.fromPath)
    if (earlier !== undefined)
      problems.push(`line ${line}: ${value.fromPath} appears again (first on line ${earlier})`)
    else firstLine.set(value.fromPath, line)
    rows.push({ line, value })
  }
  return { rows, problems }
}

export type RedirectService = ReturnType<typeof createRedirectService>
