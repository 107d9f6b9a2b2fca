import { PassThrough } from 'node:stream'

/** A log stream, and what was written to it so far: as text, and as JSON lines. */
export function collectedLines() {
  const chunks: string[] = []
  const stream = new PassThrough()
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()))
  const text = () => chunks.join('')
  const lines = () =>
    text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown> & { reqId?: string })
  return { text, lines, stream }
}
