import { stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { sqliteDriverName } from './sqlite-driver.js'

/**
 * WAL checkpoints off the event loop. A checkpoint copies the pages the WAL holds back into the
 * database file and syncs both files to disk: tens of milliseconds on a shared disk, during which
 * the connection that runs it stops. SQLite runs it inside whichever commit passes a thousand pages
 * of WAL, so a serving process's event loop would stop once in every hundred or so posts. A worker
 * thread with its own connection runs it instead, beside readers and writers (WAL allows that).
 */

const require = createRequire(import.meta.url)

/**
 * How often the background checkpointer copies the WAL back. A lone post writes about ten 8 KiB
 * pages of WAL, so a quarter of a second at a thousand posts a second is 20 MB, well short of the
 * backstop below; a checkpoint that finds nothing new to copy neither writes nor syncs.
 */
export const BACKGROUND_CHECKPOINT_MS = 250

/**
 * The serving connection's own automatic checkpoint while the background one runs: only a backstop,
 * for a WAL the worker cannot keep up with (80 MB of 8 KiB pages).
 */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 10_000

/**
 * How long the worker's RESTART checkpoint waits for the writer in progress and for readers still on
 * the WAL; a writer that starts meanwhile waits for it. Short, so a long read (an export) costs a
 * restart skipped until the next tick and a writer held no longer than this.
 */
export const RESTART_WAIT_MS = 20

/**
 * A WAL shorter than this is left to start over by itself (it does whenever a checkpoint finds no
 * commit since the last); past it, the worker makes it start over (SQLite's own default size).
 */
export const RESTART_ABOVE_PAGES = 1_000

/** SQLite's default: a commit checkpoints once the WAL holds this many pages. */
export const DEFAULT_AUTOCHECKPOINT_PAGES = 1_000

/**
 * The worker's code: it opens `file` with the driver this process uses (see `sqlite-driver.ts`)
 * and runs a PASSIVE checkpoint (which never waits for readers or writers) once, or every
 * `intervalMs` until told to stop.
 */
const WORKER_SOURCE = `const { parentPort, workerData } = require('node:worker_threads')
const { file, driver, module, intervalMs } = workerData
// This thread only checkpoints: node:sqlite's "experimental" warning would only alarm a user.
process.emitWarning = () => {}
const db = driver === 'node:sqlite'
  ? new (require('node:sqlite').DatabaseSync)(file)
  : new (require(module))(file, { fileMustExist: true })
// Waits this long at most for a writer or a reader to finish; then the checkpoint does what it can.
db.exec('pragma busy_timeout = ${RESTART_WAIT_MS}')
const passive = db.prepare('pragma wal_checkpoint(PASSIVE)')
const restart = db.prepare('pragma wal_checkpoint(RESTART)')
const checkpoint = () => passive.get()
// Under steady writes a PASSIVE checkpoint never finds the WAL copied to its very end, so SQLite
// never starts it over and it grows to the backstop. When it copied all it saw of a WAL past
// ${RESTART_ABOVE_PAGES} pages, RESTART copies the few pages committed since (writers wait for that,
// a few milliseconds) and the next commit starts the WAL over.
const tick = () => {
  const done = checkpoint()
  if (done.busy === 0 && done.log >= ${RESTART_ABOVE_PAGES} && done.checkpointed === done.log) restart.get()
}
if (intervalMs === null) {
  try { checkpoint() } finally { db.close() }
  parentPort.postMessage('done')
} else {
  // A checkpoint that fails (another process checkpointing, a full disk) is tried again next time;
  // the pages wait in the WAL meanwhile.
  const timer = setInterval(() => { try { tick() } catch {} }, intervalMs)
  parentPort.on('message', () => {
    clearInterval(timer)
    checkpoint()
    db.close()
    parentPort.close()
  })
}`

/**
 * A worker thread running CommonJS `source` with a connection of its own: `workerData` gets
 * `driver` (this process's, see `sqlite-driver.ts`) and `module` (better-sqlite3's path, if that is
 * the driver) beside `data`.
 */
export function startSqliteWorker(source: string, data: Record<string, unknown>): Worker {
  const driver = sqliteDriverName()
  return new Worker(source, {
    eval: true,
    // Not the process's own flags: `--input-type=module` would make this CommonJS source a module.
    execArgv: [],
    workerData: {
      ...data,
      driver,
      module: driver === 'better-sqlite3' ? require.resolve('better-sqlite3') : undefined,
    },
  })
}

function startWorker(file: string, intervalMs: number | null): Worker {
  return startSqliteWorker(WORKER_SOURCE, { file, intervalMs })
}

/** A PASSIVE checkpoint of the SQLite file `file`, from a worker thread; resolves when it is done. */
export async function checkpointInWorker(file: string): Promise<void> {
  const worker = startWorker(file, null)
  // A failed checkpoint loses nothing: the next commit's automatic checkpoint copies the pages.
  await new Promise<void>((resolve) => {
    worker.once('message', () => resolve())
    worker.once('error', () => resolve())
    worker.once('exit', () => resolve())
  })
}

/** A checkpointer running in the background; `stop` ends it after a last checkpoint. */
export interface BackgroundCheckpoints {
  /** Whether the worker thread runs now (it runs only while the file is being written). */
  readonly running: boolean
  stop(): Promise<void>
}

/** How often the main thread looks at the WAL file to see whether anything was written. */
export const WAL_WATCH_MS = 1_000

/**
 * How long the worker keeps running after the last stream of writes it saw. A worker thread costs a
 * serving process 7–8 MB (a V8 isolate and the driver loaded again), which a server that only reads
 * should not pay; one that takes writes all day keeps it.
 */
export const IDLE_STOP_MS = 2 * 60_000

export interface BackgroundCheckpointOptions {
  /** The worker has started: the serving connection's own checkpoints become a backstop. */
  onStart(): void
  /** The worker has stopped (idle, or failed): the serving connection checkpoints by itself again. */
  onStop(): void
  intervalMs?: number
  watchMs?: number
  idleMs?: number
}

/**
 * Checkpoints `file` from a worker thread every `intervalMs` while a stream of writes goes on. The
 * main thread looks at the WAL file's size and modification time every `watchMs` (one `stat`, off
 * the event loop). Writes seen at two looks in a row are a stream (posts arriving): the worker
 * starts; `idleMs` without a stream stops it. A lone write now and then (an editor's change, the
 * keys' usage each minute) starts nothing: SQLite's own checkpoint, once a thousand pages have
 * gathered, copies them, as it does for the first second of a stream. A worker that fails is not
 * started again: the connection keeps its own checkpoints, and the WAL never grows unchecked.
 */
export function startBackgroundCheckpoints(
  file: string,
  {
    onStart,
    onStop,
    intervalMs = BACKGROUND_CHECKPOINT_MS,
    watchMs = WAL_WATCH_MS,
    idleMs = IDLE_STOP_MS,
  }: BackgroundCheckpointOptions,
): BackgroundCheckpoints {
  let worker: { stop(): Promise<void> } | undefined
  let failed = false
  let closed = false
  let lastSeen: string | undefined
  let changedBefore = false
  let lastStream = Date.now()
  let looking = false

  const startThread = () => {
    const thread = startWorker(file, intervalMs)
    let stopping = false
    // It never keeps a process alive that has nothing else to do.
    thread.unref()
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()))
    const fail = () => {
      if (stopping) return
      stopping = true
      failed = true
      worker = undefined
      onStop()
    }
    thread.once('error', fail)
    thread.once('exit', fail)
    onStart()
    return {
      async stop() {
        if (stopping) return exited
        stopping = true
        // Held now, so that the process waits for the last checkpoint instead of exiting under it.
        thread.ref()
        thread.postMessage('stop')
        await exited
      },
    }
  }

  const look = async () => {
    if (looking || closed || failed) return
    looking = true
    try {
      const seen = await stat(`${file}-wal`).then(
        (wal) => `${wal.size}:${wal.mtimeMs}`,
        () => 'none',
      )
      if (closed || failed) return
      const changed = lastSeen !== undefined && seen !== lastSeen
      const stream = changed && changedBefore
      lastSeen = seen
      changedBefore = changed
      if (stream) {
        lastStream = Date.now()
        worker ??= startThread()
      } else if (worker !== undefined && Date.now() - lastStream >= idleMs) {
        const idle = worker
        worker = undefined
        await idle.stop()
        if (!closed) onStop()
      }
    } finally {
      looking = false
    }
  }
  const timer = setInterval(() => void look(), watchMs)
  timer.unref()
  void look()

  return {
    get running() {
      return worker !== undefined
    },
    async stop() {
      closed = true
      clearInterval(timer)
      const last = worker
      worker = undefined
      await last?.stop()
    },
  }
}
