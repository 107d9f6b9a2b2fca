import { createReadStream } from 'node:fs'
import { MAX_RECORD_BYTES } from '../../limits.js'
import { unreadableFileError } from './errors.js'
import type { FieldProblem } from './locations.js'

/**
 * How many lines make one batch handed to the consumer. Small: the records parsed from a batch are
 * alive until it is consumed, and a big batch outlives young-generation collections and fills the
 * old generation with garbage (2,000 lines cost ~30 MB of peak RSS over a million records).
 */
const LINES_PER_BATCH = 100

/** A line that cannot be a record whatever it holds: too long, or not UTF-8. */
export interface LineFault {
  fault: FieldProblem
}

/** One line of the file: its text, or why it has none. */
export type Line = string | LineFault

/**
 * The lines of a file, in batches, each decoded as strict UTF-8 (invalid bytes are a
 * {@link LineFault}, never silently replaced). A line longer than {@link MAX_RECORD_BYTES} is a
 * fault too, and its bytes are skipped as they stream by rather than collected, so one huge line
 * cannot fill the memory. Lines end at `\n`; a `\r` before it is dropped. The stream is read only
 * as fast as the consumer takes batches: an async generator does not resume until asked.
 */
export async function* readLineBatches(path: string): AsyncGenerator<Line[]> {
  const input = createReadStream(path, { highWaterMark: 256 * 1024 })
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const decode = (bytes: Uint8Array): Line => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length
    try {
      return decoder.decode(bytes.subarray(0, end))
    } catch {
      return { fault: { message: 'is not valid UTF-8 text (the file must be UTF-8)' } }
    }
  }
  const tooLong: LineFault = {
    fault: {
      message: `is longer than ${MAX_RECORD_BYTES} bytes, more than any valid record; it was not read`,
    },
  }
  // The start of the current line, kept across chunks; `skipping` once it is known to be too long.
  let pending: Buffer[] = []
  let pendingBytes = 0
  let skipping = false
  let batch: Line[] = []
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let start = 0
      for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
        if (skipping) {
          batch.push(tooLong)
        } else if (pendingBytes + end - start > MAX_RECORD_BYTES) {
          batch.push(tooLong)
        } else if (pending.length > 0) {
          pending.push(chunk.subarray(start, end))
          batch.push(decode(Buffer.concat(pending)))
        } else {
          batch.push(decode(chunk.subarray(start, end)))
        }
        pending = []
        pendingBytes = 0
        skipping = false
        start = end + 1
        if (batch.length >= LINES_PER_BATCH) {
          yield batch
          batch = []
        }
      }
      if (start < chunk.length && !skipping) {
        pendingBytes += chunk.length - start
        if (pendingBytes > MAX_RECORD_BYTES) {
          skipping = true
          pending = []
        } else {
          // A copy: the rest of the chunk would otherwise keep the whole chunk alive.
          pending.push(Buffer.from(chunk.subarray(start)))
        }
      }
    }
    if (skipping) batch.push(tooLong)
    else if (pendingBytes > 0) batch.push(decode(Buffer.concat(pending)))
    if (batch.length > 0) yield batch
  } catch (error) {
    throw unreadableFileError(path, error)
  } finally {
    input.destroy()
  }
}
