import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { CsvError, parse } from 'csv-parse'
import { stringify } from 'csv-stringify/sync'
import type { Executor } from '../../db/executor.js'
import { redirectBatches } from '../../db/repositories/redirects.js'
import { checkRedirectInput, type RedirectValue } from '../../resources/redirect.js'
import { redirectPathForEntry } from '../../resources/redirect-path.js'
import { ROWS_PER_TURN } from './pacing.js'

/** The columns of the CSV format, in the order `exportCsv` writes them. */
export const CSV_COLUMNS = ['fromPath', 'toPath', 'type', 'isActive'] as const
/** Characters of CSV text handed to the parser at a time: it parses a whole slice synchronously. */
const CSV_SLICE = 16 * 1024

/** A row of a CSV import: its line, the redirect as read, and how many problems it has. */
export interface CsvRow {
  line: number
  value: RedirectValue
  problems: number
}

/** A problem with the line it is on, for sorting with the problems found later (loops). */
export interface LineProblem {
  line: number
  text: string
}

/**
 * Every redirect as CSV (`fromPath,toPath,type,isActive`), oldest first, streamed in batches;
 * `importCsv` reads it back (a literal `%` in a path is written `%25`, as it is typed).
 */
export function redirectsCsv(db: Executor): Readable {
  return Readable.from(
    (async function* () {
      yield stringify([[...CSV_COLUMNS]])
      for await (const rows of redirectBatches(db)) {
        yield stringify(
          rows.map((row) => [
            redirectPathForEntry(row.from_path),
            redirectPathForEntry(row.to_path),
            row.type,
            Number(row.is_active) === 1 ? 'true' : 'false',
          ]),
        )
      }
    })(),
    { objectMode: false },
  )
}

/** `text` in slices that do not split a UTF-16 surrogate pair, for a parser fed a slice at a time. */
function* slices(text: string): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + CSV_SLICE, text.length)
    const code = text.charCodeAt(end - 1)
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end--
    yield text.slice(start, end)
    start = end
  }
}

/**
 * Reads and checks CSV text; each row keeps its line number for messages. The text is parsed a
 * slice at a time with turns of the event loop between, so a large file does not stall the server.
 */
export async function readCsv(text: string): Promise<{ rows: CsvRow[]; problems: LineProblem[] }> {
  const problems: LineProblem[] = []
  const problem = (line: number, message: string) => problems.push({ line, text: `line ${line}: ${message}` })
  const parser = Readable.from(slices(text)).pipe(
    parse({ bom: true, skip_empty_lines: true, info: true, relax_column_count: true }),
  )
  const known = new Map<string, (typeof CSV_COLUMNS)[number]>(CSV_COLUMNS.map((c) => [c.toLowerCase(), c]))
  let columns: ((typeof CSV_COLUMNS)[number] | undefined)[] | undefined
  let needed = 0
  const rows: CsvRow[] = []
  const firstLine = new Map<string, number>()
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[]
      info: { lines: number }
    }>) {
      const line = info.lines
      if (columns === undefined) {
        columns = record.map((name) => known.get(name.trim().toLowerCase()))
        record.forEach((name, index) => {
          if (columns?.[index] === undefined)
            problem(1, `unknown column '${name}' (the columns are ${CSV_COLUMNS.join(', ')})`)
        })
        for (const required of ['fromPath', 'toPath'] as const)
          if (!columns.includes(required)) problem(1, `the header has no '${required}' column`)
        if (problems.length > 0) return { rows: [], problems }
        // Optional columns may be left off the end of a row; the required ones may not.
        needed = Math.max(columns.indexOf('fromPath'), columns.indexOf('toPath')) + 1
        continue
      }
      if (rows.length % ROWS_PER_TURN === 0) await nextTurn()
      const before = problems.length
      if (record.length > columns.length || record.length < needed) {
        const expected = needed === columns.length ? `${needed}` : `${needed} to ${columns.length}`
        problem(line, `expected ${expected} values, found ${record.length}`)
        continue
      }
      const cell = (column: (typeof CSV_COLUMNS)[number]) => {
        const index = columns?.indexOf(column) ?? -1
        return index === -1 ? '' : (record[index] ?? '')
      }
      const active = cell('isActive').trim().toLowerCase()
      if (active !== '' && active !== 'true' && active !== 'false')
        problem(line, `isActive must be 'true' or 'false', not '${cell('isActive')}'`)
      const { value, problems: found } = checkRedirectInput({
        fromPath: cell('fromPath'),
        toPath: cell('toPath'),
        type: cell('type'),
        isActive: active !== 'false',
      })
      for (const text of found) problem(line, text)
      const earlier = firstLine.get(value.fromPath)
      if (earlier !== undefined) problem(line, `${value.fromPath} appears again (first on line ${earlier})`)
      else firstLine.set(value.fromPath, line)
      rows.push({ line, value, problems: problems.length - before })
    }
  } catch (error) {
    if (error instanceof CsvError)
      return { rows: [], problems: [{ line: 0, text: `the file is not valid CSV: ${error.message}` }] }
    throw error
  }
  if (columns === undefined)
    return {
      rows: [],
      problems: [{ line: 0, text: 'the file is empty: it needs a header line and one line per redirect' }],
    }
  if (rows.length === 0 && problems.length === 0)
    problems.push({ line: 1, text: 'the file has a header but no redirects' })
  return { rows, problems }
}
