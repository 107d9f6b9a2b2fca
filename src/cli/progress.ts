import type { ImportProgress } from '../services/import/index.js'
import type { CliOutput } from './io.js'

/** How often the progress line is redrawn within a phase; a new phase is drawn at once. */
const REDRAW_MS = 250

const count = (n: number) => n.toLocaleString('en-US')

function duration(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`
  const minutes = Math.floor(seconds / 60)
  return `${minutes} min ${Math.round(seconds % 60)} s`
}

/** One line saying where an import is: its phase, records done, rate and, when known, time left. */
export function describeProgress(progress: ImportProgress, elapsedMs: number): string {
  const { phase, done, total } = progress
  if (phase === 'finishing')
    return `finishing: ordering, indexing and committing ${count(total ?? done)} records…`
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0
  const speed = rate > 0 && elapsedMs >= 1000 ? `, ${count(Math.round(rate))} records/s` : ''
  if (total === undefined || total === 0) return `${phase}: ${count(done)} records${speed}`
  const percent = Math.min(100, Math.floor((done * 100) / total))
  const left = rate > 0 && elapsedMs >= 1000 ? `, about ${duration((total - done) / rate)} left` : ''
  return `${phase}: ${count(done)} of ${count(total)} records (${percent}%)${speed}${left}`
}

/**
 * A progress line for a terminal: redrawn in place on `stream` (carriage return, clear to the end
 * of the line), at most every {@link REDRAW_MS} within a phase, and erased by `clear()` so that
 * what the command prints next starts on a clean line. Not for pipes and files, which would keep
 * every redraw.
 */
export function progressLine(stream: CliOutput, now: () => number = Date.now) {
  let phase: ImportProgress['phase'] | undefined
  let phaseStart = 0
  let lastDraw = 0
  let shown = false
  return {
    update(progress: ImportProgress): void {
      const at = now()
      if (progress.phase !== phase) {
        phase = progress.phase
        phaseStart = at
      } else if (at - lastDraw < REDRAW_MS) return
      lastDraw = at
      const text = describeProgress(progress, at - phaseStart)
      const width = stream.columns !== undefined && stream.columns > 1 ? stream.columns - 1 : text.length
      stream.write(`\r\x1b[K${text.slice(0, width)}`)
      shown = true
    },
    clear(): void {
      if (shown) stream.write('\r\x1b[K')
      shown = false
    },
  }
}
