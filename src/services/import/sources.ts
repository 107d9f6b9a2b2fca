import { readFile, stat } from 'node:fs/promises'
import { extname } from 'node:path'
import { closestName } from '../../closest-name.js'
import { describeJsonType, isObject, type JsonObject, locateSyntaxError, stripBom } from '../../json.js'
import { fileChangedError, ImportError, unreadableFileError } from './errors.js'
import { COLLECTIONS, type Collection, type ImportKind, KIND_OF, KINDS } from './kinds.js'
import type { FieldProblem, Location } from './locations.js'
import { readLineBatches } from './read-lines.js'

/** A record of a known kind, or a problem that kept an item or a line from being one. */
export type SourceEntry =
  | { kind: ImportKind; record: JsonObject; location: Location }
  | { problem: FieldProblem; location: Location }

/**
 * Records in file order, their `order`s increasing. Iterated more than once: to validate, to
 * recheck form ids, to write.
 */
export interface RecordSource {
  /** Problems with the file as a whole (syntax, top-level keys); records are not read when present. */
  fileProblems: FieldProblem[]
  entries(): AsyncIterable<SourceEntry[]>
  /**
   * The location of the record of `kind` whose `order` it is: the importer keeps only orders (a
   * number per record) between its passes, and rebuilds a location when it has something to say.
   */
  locate(order: number, kind: ImportKind): Location
  /** Throws {@link ImportError} if the file changed since it was first read; called before commit. */
  assertUnchanged?(): Promise<void>
}

/** How many JSON array items make one batch of entries. */
const ITEMS_PER_BATCH = 500

/**
 * The records of a `.json` or `.ndjson` file. A `.json` file is parsed whole; an `.ndjson` file is
 * streamed each time its entries are iterated, and never held in memory.
 */
export async function fileSource(path: string): Promise<RecordSource> {
  const extension = extname(path).toLowerCase()
  if (extension !== '.json' && extension !== '.ndjson') {
    throw new ImportError([
      `'${path}' is neither a .json nor a .ndjson file; the file name's extension says which format it holds`,
    ])
  }
  const before = await fileVersion(path)
  if (extension === '.json') return readJsonDocument(path)
  return {
    ...ndjsonSource(path),
    async assertUnchanged() {
      const after = await fileVersion(path)
      if (after.size !== before.size || after.mtimeMs !== before.mtimeMs) throw fileChangedError()
    },
  }
}

/** The in-memory JSON document as records, checked for shape first. */
export function jsonSource(document: unknown): RecordSource {
  const fileProblems: FieldProblem[] = []
  const arrays = new Map<Collection, unknown[]>()
  if (!isObject(document)) {
    fileProblems.push({
      message: `the file must hold a JSON object such as {"forms": [], "pages": []} (got ${describeJsonType(document)})`,
    })
  } else {
    for (const [key, value] of Object.entries(document)) {
      if (!(COLLECTIONS as readonly string[]).includes(key)) {
        const suggestion = closestName(key, COLLECTIONS)
        fileProblems.push({
          message: `unknown top-level key '${key}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}; expected ${COLLECTIONS.join(', ')}`,
        })
      } else if (!Array.isArray(value)) {
        fileProblems.push({ field: key, message: `must be an array (got ${describeJsonType(value)})` })
      } else {
        arrays.set(key as Collection, value)
      }
    }
  }
  return {
    fileProblems,
    locate: locateItem,
    async *entries() {
      // Orders keep the four arrays apart: problems list forms first, then submissions, and so on.
      for (const [rank, collection] of COLLECTIONS.entries()) {
        const items = arrays.get(collection) ?? []
        const kind = KIND_OF[collection]
        for (let start = 0; start < items.length; start += ITEMS_PER_BATCH) {
          const batch: SourceEntry[] = []
          for (let index = start; index < Math.min(start + ITEMS_PER_BATCH, items.length); index++) {
            const location: Location = {
              style: 'item',
              order: rank * ITEMS_PER_ARRAY + index + 1,
              collection,
              index,
            }
            const record = items[index]
            batch.push(
              isObject(record)
                ? { kind, record, location }
                : {
                    problem: { message: `must be a JSON object (got ${describeJsonType(record)})` },
                    location,
                  },
            )
          }
          yield batch
        }
      }
    },
  }
}

/** Orders of the JSON format: each array has this much room, so orders keep the arrays apart. */
const ITEMS_PER_ARRAY = 2 ** 32

function locateItem(order: number): Location {
  const rank = Math.floor((order - 1) / ITEMS_PER_ARRAY)
  return {
    style: 'item',
    order,
    collection: COLLECTIONS[rank] as Collection,
    index: (order - 1) % ITEMS_PER_ARRAY,
  }
}

function locateLine(order: number, kind: ImportKind): Location {
  return { style: 'line', order, line: order, kind }
}

async function readJsonDocument(path: string): Promise<RecordSource> {
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (error) {
    throw unreadableFileError(path, error)
  }
  let text: string
  try {
    text = stripBom(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    return {
      fileProblems: [{ message: `the file is not valid UTF-8 text at line ${firstInvalidLine(bytes)}` }],
      entries: noEntries,
      locate: locateItem,
    }
  }
  if (text.trim() === '') return jsonSource({})
  let document: unknown
  try {
    document = JSON.parse(text)
  } catch (error) {
    const { reason, line, column } = locateSyntaxError(text, error)
    const where = line === undefined ? '' : ` at line ${line}, column ${column}`
    // Text that does not even begin as an object is most likely not JSON at all (or NDJSON named
    // .json): the parser's complaint about its second character would not say what was expected.
    const message = !text.trimStart().startsWith('{')
      ? `the file must hold a JSON object such as {"forms": [], "pages": []}, but it is not JSON (it begins ${beginning(text)})`
      : `the file is not valid JSON${where}: ${reason}`
    return {
      fileProblems: [{ message }],
      entries: noEntries,
      locate: locateItem,
    }
  }
  return jsonSource(document)
}

async function* noEntries(): AsyncGenerator<SourceEntry[]> {}

/** The number of the first line of `bytes` that is not valid UTF-8 (found only after a failure). */
function firstInvalidLine(bytes: Buffer): number {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let line = 1
  for (let start = 0; start <= bytes.length; line++) {
    const newline = bytes.indexOf(0x0a, start)
    const end = newline === -1 ? bytes.length : newline
    try {
      decoder.decode(bytes.subarray(start, end))
    } catch {
      return line
    }
    if (newline === -1) break
    start = newline + 1
  }
  return line
}

/** Each non-blank line of an NDJSON file as a record, read as a stream each time it is iterated. */
function ndjsonSource(path: string): RecordSource {
  return {
    fileProblems: [],
    locate: locateLine,
    async *entries() {
      let line = 0
      for await (const lines of readLineBatches(path)) {
        const batch: SourceEntry[] = []
        for (const text of lines) {
          line++
          const entry =
            typeof text === 'string'
              ? parseLine(line === 1 ? stripBom(text) : text, line)
              : lineProblem(line, text.fault)
          if (entry) batch.push(entry)
        }
        yield batch
      }
    },
  }
}

function parseLine(text: string, line: number): SourceEntry | undefined {
  if (text.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    // A line that does not begin as an object is not a broken record but no record at all.
    if (!text.trimStart().startsWith('{'))
      return lineProblem(line, {
        message: `not a JSON object: expected one JSON record per line, such as {"kind": "form", "title": "Contact"} (the line begins ${beginning(text)})`,
      })
    const { reason, column } = locateSyntaxError(text, error)
    const where = column === undefined ? '' : ` at column ${column}`
    return lineProblem(line, { message: `not valid JSON${where}: ${reason}` })
  }
  if (!isObject(value)) {
    return lineProblem(line, {
      message: `must be a JSON object with a "kind" (got ${describeJsonType(value)})`,
    })
  }
  const kind = value.kind
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) {
    const expected = KINDS.map((k) => `'${k}'`).join(', ')
    return lineProblem(line, {
      field: 'kind',
      message:
        kind === undefined
          ? `is required (one of ${expected})`
          : `must be one of ${expected} (got ${JSON.stringify(kind)})`,
    })
  }
  // One literal per line, kind included: spreading a kindless location costs ~0.7 s per million lines.
  const known = kind as ImportKind
  return { kind: known, record: value, location: { style: 'line', order: line, line, kind: known } }
}

/** The first characters of `text`, quoted and escaped, to show what a file or line holds instead. */
function beginning(text: string): string {
  const start = text.trimStart()
  const shown = [...start.slice(0, 48)].slice(0, 24).join('')
  return JSON.stringify(shown.length < start.length ? `${shown}…` : shown)
}

/** A line that is no record; it has no kind to name in its location. */
function lineProblem(line: number, problem: FieldProblem): SourceEntry {
  return { problem, location: { style: 'line', order: line, line } }
}

/** Size and modification time, to notice a file that changes between the two passes. */
async function fileVersion(path: string): Promise<{ size: number; mtimeMs: number }> {
  try {
    const stats = await stat(path)
    if (!stats.isFile()) throw new ImportError([`'${path}' is not a file`])
    return { size: stats.size, mtimeMs: stats.mtimeMs }
  } catch (error) {
    if (error instanceof ImportError) throw error
    throw unreadableFileError(path, error)
  }
}
