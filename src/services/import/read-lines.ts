import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { unreadableFileError } from './errors.js'

/** How many lines may wait for the consumer before the file stream is paused. */
const LINE_QUEUE_HIGH_WATER = 2000

/**
 * The lines of a file, in batches, with back-pressure. `readline`'s own async iterator keeps
 * reading while the consumer is busy writing (Node 20 buffers the whole file that way), so the
 * input is paused here whenever enough lines are waiting.
 */
export async function* readLineBatches(path: string): AsyncGenerator<string[]> {
  const input = createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 })
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
  let queue: string[] = []
  let finished = false
  let failure: unknown
  let wake: (() => void) | undefined
  const notify = () => {
    const resolve = wake
    wake = undefined
    resolve?.()
  }
  reader.on('line', (line) => {
    queue.push(line)
    if (queue.length >= LINE_QUEUE_HIGH_WATER) reader.pause()
    notify()
  })
  reader.on('close', () => {
    finished = true
    notify()
  })
  input.on('error', (error) => {
    failure = error
    finished = true
    notify()
  })
  try {
    for (;;) {
      if (queue.length > 0) {
        const lines = queue
        queue = []
        reader.resume()
        yield lines
      } else if (failure !== undefined) {
        throw unreadableFileError(path, failure)
      } else if (finished) {
        return
      } else {
        await new Promise<void>((resolve) => {
          wake = resolve
        })
      }
    }
  } finally {
    reader.close()
    input.destroy()
  }
}
