import type { IncomingMessage } from 'node:http'
import { INTAKE_LIMITS, type PostedValue } from '../../resources/form.js'

/** Why a body was refused, as the intake answers it. */
export class BodyError extends Error {
  constructor(
    readonly type: 'payload_too_large' | 'unsupported_media_type' | 'validation_failed',
    message: string,
    /** The field a value problem belongs to, with the problem, for the answer's `fields`. */
    readonly fields: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'BodyError'
  }
}

/** The client went away before its body was complete: there is no one to answer. */
export class BodyCutOff extends Error {
  constructor() {
    super('the request body ended early')
    this.name = 'BodyCutOff'
  }
}

export type BodyKind = 'urlencoded' | 'multipart' | 'json'

/** A post's fields: the stored ones by name, and the control fields (`_…`) apart. */
export interface PostedFields {
  data: Record<string, PostedValue>
  control: Record<string, string>
}

/** Which kind of body a `Content-Type` names, with a multipart body's boundary; null: none the intake reads. */
export function bodyKind(contentType: string | undefined): { kind: BodyKind; boundary?: string } | null {
  if (contentType === undefined) return null
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim())
  switch (type.toLowerCase()) {
    case 'application/x-www-form-urlencoded':
      return { kind: 'urlencoded' }
    case 'application/json':
      return { kind: 'json' }
    case 'multipart/form-data': {
      const boundary = parameters
        .map((parameter) => /^boundary=(?:"([^"]{1,70})"|([^\s";]{1,70}))$/i.exec(parameter))
        .find((match) => match !== null)
      return { kind: 'multipart', boundary: boundary?.[1] ?? boundary?.[2] }
    }
    default:
      return null
  }
}

const tooLarge = () =>
  new BodyError('payload_too_large', `The request body is over ${INTAKE_LIMITS.bodyBytes} bytes`)
const invalid = (message: string, fields: Record<string, string> = {}) =>
  new BodyError('validation_failed', message, fields)

/**
 * Collects fields as they are read, refusing the post as soon as a limit is passed: more than 100
 * fields (control fields not counted), a name over 100 characters, a value over 10,000.
 */
class FieldCollector {
  readonly data: Record<string, PostedValue> = Object.create(null)
  readonly control: Record<string, string> = Object.create(null)
  private count = 0
  private controls = 0

  add(name: string, value: PostedValue): void {
    if (name === '') throw invalid('A field has no name')
    if (characters(name) > INTAKE_LIMITS.nameLength)
      throw invalid(`A field name is over ${INTAKE_LIMITS.nameLength} characters`)
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item === 'string' && characters(item) > INTAKE_LIMITS.valueLength)
        throw invalid(`The value of '${name}' is over ${INTAKE_LIMITS.valueLength} characters`, {
          [name]: `is over ${INTAKE_LIMITS.valueLength} characters`,
        })
    }
    if (name.startsWith('_')) {
      // Control fields are bounded too, so that they cannot be the way round the field limit.
      if (++this.controls > INTAKE_LIMITS.fields)
        throw invalid(`The post has over ${INTAKE_LIMITS.fields} control fields`)
      this.control[name] = Array.isArray(value) ? value.map(String).join(',') : String(value)
      return
    }
    if (++this.count > INTAKE_LIMITS.fields) throw invalid(`The post has over ${INTAKE_LIMITS.fields} fields`)
    const before = this.data[name]
    if (before === undefined) this.data[name] = value
    else
      this.data[name] = [
        ...(Array.isArray(before) ? before : [before]),
        ...(Array.isArray(value) ? value : [value]),
      ]
  }
}

/** Characters as a person counts them (code points), cheaply for the common short string. */
function characters(text: string): number {
  if (text.length <= INTAKE_LIMITS.nameLength) return text.length
  let count = 0
  for (const _ of text) count++
  return count
}

interface IncrementalParser {
  write(chunk: Buffer): void
  end(): void
}

/**
 * Reads `request`'s body of `kind`, at most 64 KiB, parsing it while it arrives so that a limit
 * passed early refuses the post at once. A refused body is left unread: the caller answers and
 * closes the connection instead of reading the rest.
 */
export function readPostedFields(
  request: IncomingMessage,
  kind: BodyKind,
  boundary: string | undefined,
): Promise<PostedFields> {
  const fields = new FieldCollector()
  const parser: IncrementalParser =
    kind === 'urlencoded'
      ? new UrlEncodedParser(fields)
      : kind === 'json'
        ? new JsonParser(fields)
        : new MultipartParser(fields, boundary)
  return new Promise((resolve, reject) => {
    let received = 0
    let settled = false
    const finish = (error?: Error) => {
      if (settled) return
      settled = true
      request.off('data', onData)
      request.off('end', onEnd)
      request.off('aborted', onCutOff)
      request.off('close', onClose)
      request.off('error', onCutOff)
      if (error === undefined) resolve({ data: fields.data, control: fields.control })
      else {
        // Stop reading: the rest of an oversized or refused body is never read.
        request.pause()
        reject(error)
      }
    }
    const onData = (chunk: Buffer) => {
      received += chunk.length
      try {
        if (received > INTAKE_LIMITS.bodyBytes) throw tooLarge()
        parser.write(chunk)
      } catch (error) {
        finish(error as Error)
      }
    }
    const onEnd = () => {
      try {
        parser.end()
        finish()
      } catch (error) {
        finish(error as Error)
      }
    }
    const onCutOff = () => finish(new BodyCutOff())
    const onClose = () => {
      if (!request.complete) onCutOff()
    }
    request.on('data', onData)
    request.on('end', onEnd)
    request.on('aborted', onCutOff)
    request.on('close', onClose)
    request.on('error', onCutOff)
  })
}

/** `a=1&b=2`: each pair is decoded and collected as soon as its `&` arrives. */
class UrlEncodedParser implements IncrementalParser {
  private pending: Buffer = Buffer.alloc(0)

  constructor(private readonly fields: FieldCollector) {}

  write(chunk: Buffer): void {
    // Split as bytes, so that text sent unencoded (UTF-8 from a script) is never cut mid-character.
    let text = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    let at = text.indexOf(AMPERSAND)
    while (at !== -1) {
      this.pair(text.subarray(0, at).toString('utf8'))
      text = text.subarray(at + 1)
      at = text.indexOf(AMPERSAND)
    }
    this.pending = text
  }

  end(): void {
    this.pair(this.pending.toString('utf8'))
    this.pending = Buffer.alloc(0)
  }

  private pair(pair: string): void {
    if (pair === '') return
    const equals = pair.indexOf('=')
    const name = equals === -1 ? pair : pair.slice(0, equals)
    const value = equals === -1 ? '' : pair.slice(equals + 1)
    this.fields.add(decode(name), decode(value))
  }
}

const AMPERSAND = 0x26

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    throw invalid('The form body is malformed (a bad percent-encoding)')
  }
}

/** A JSON object; it is parsed once whole, which the 64 KiB cap bounds. */
class JsonParser implements IncrementalParser {
  private readonly chunks: Buffer[] = []

  constructor(private readonly fields: FieldCollector) {}

  write(chunk: Buffer): void {
    this.chunks.push(chunk)
  }

  end(): void {
    let parsed: unknown
    try {
      parsed = JSON.parse(Buffer.concat(this.chunks).toString('utf8'))
    } catch {
      throw invalid('The body is not valid JSON')
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw invalid('The body must be a JSON object of fields')
    for (const [name, value] of Object.entries(parsed)) {
      if (!isPostedValue(value))
        throw invalid(`The value of '${name}' must be a string, number, boolean or an array of those`, {
          [name]: 'must be a string, number, boolean or an array of those',
        })
      this.fields.add(name, value)
    }
  }
}

const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' ||
  typeof value === 'boolean' ||
  (typeof value === 'number' && Number.isFinite(value))

function isPostedValue(value: unknown): value is PostedValue {
  return isScalar(value) || (Array.isArray(value) && value.every(isScalar))
}

const CRLF = Buffer.from('\r\n')
const HEADER_END = Buffer.from('\r\n\r\n')
const MAX_PART_HEADERS = 2048

/**
 * `multipart/form-data` with text parts only. Each part's headers are read as soon as they arrive,
 * so a file part is refused before its content is read, and each value is collected when its
 * delimiter arrives.
 */
class MultipartParser implements IncrementalParser {
  private buffer: Buffer = Buffer.alloc(0)
  private state: 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'done' = 'preamble'
  private readonly delimiter: Buffer
  private name = ''

  constructor(
    private readonly fields: FieldCollector,
    boundary: string | undefined,
  ) {
    if (boundary === undefined) throw invalid('The multipart body has no boundary')
    this.delimiter = Buffer.from(`\r\n--${boundary}`)
  }

  write(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    this.advance()
  }

  end(): void {
    this.advance()
    if (this.state !== 'done') throw invalid('The multipart body is malformed or cut short')
  }

  private advance(): void {
    for (;;) {
      if (this.state === 'preamble') {
        // The first delimiter may open the body without the CRLF before it.
        const start = this.buffer.subarray(0, this.delimiter.length - 2)
        if (start.length < this.delimiter.length - 2) return
        if (start.equals(this.delimiter.subarray(2))) {
          this.buffer = this.buffer.subarray(this.delimiter.length - 2)
        } else {
          const at = this.buffer.indexOf(this.delimiter)
          if (at === -1) return
          this.buffer = this.buffer.subarray(at + this.delimiter.length)
        }
        this.state = 'after-delimiter'
      } else if (this.state === 'after-delimiter') {
        if (this.buffer.length < 2) return
        const next = this.buffer.subarray(0, 2).toString('latin1')
        if (next === '--') {
          this.state = 'done'
          return
        }
        if (next !== '\r\n') throw invalid('The multipart body is malformed')
        this.buffer = this.buffer.subarray(2)
        this.state = 'headers'
      } else if (this.state === 'headers') {
        const at = this.buffer.indexOf(HEADER_END)
        if (at === -1) {
          if (this.buffer.length > MAX_PART_HEADERS) throw invalid('A multipart part has oversized headers')
          return
        }
        this.name = this.partName(this.buffer.subarray(0, at).toString('utf8'))
        this.buffer = this.buffer.subarray(at + HEADER_END.length)
        this.state = 'body'
      } else if (this.state === 'body') {
        const at = this.buffer.indexOf(this.delimiter)
        if (at === -1) {
          // A value this long cannot be under the limit, whatever its characters.
          if (this.buffer.length > INTAKE_LIMITS.valueLength * 4 + this.delimiter.length)
            throw invalid(`The value of '${this.name}' is over ${INTAKE_LIMITS.valueLength} characters`, {
              [this.name]: `is over ${INTAKE_LIMITS.valueLength} characters`,
            })
          return
        }
        this.fields.add(this.name, this.buffer.subarray(0, at).toString('utf8'))
        this.buffer = this.buffer.subarray(at + this.delimiter.length)
        this.state = 'after-delimiter'
      } else {
        return
      }
    }
  }

  /** The part's field name; a part carrying a file (a `filename`) is refused. */
  private partName(head: string): string {
    let name: string | undefined
    for (const line of head.split(CRLF.toString())) {
      const colon = line.indexOf(':')
      if (colon === -1) throw invalid('A multipart part has a malformed header')
      const header = line.slice(0, colon).trim().toLowerCase()
      const value = line.slice(colon + 1)
      if (header !== 'content-disposition') continue
      if (/;\s*filename\*?=/i.test(value))
        throw new BodyError('unsupported_media_type', 'Files cannot be posted to a form: only text fields')
      const match = /;\s*name="((?:[^"\\]|\\.)*)"/i.exec(value) ?? /;\s*name=([^;\s]+)/i.exec(value)
      name = match?.[1]?.replace(/\\(.)/g, '$1')
    }
    if (name === undefined) throw invalid('A multipart part has no field name')
    return name
  }
}
