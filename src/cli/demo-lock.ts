import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ValidationError } from '../errors.js'

/** The demo's own database, beside the directory it was started in; `<file>.lock` names its process. */
export const DEMO_DATABASE_FILE = './data/demo.db'

/**
 * Takes `<file>.lock`, holding this process's id, for as long as the process lives. A lock whose
 * process has gone (a demo killed with SIGKILL) is taken over; a live one is refused in one line.
 */
export function lockDatabaseFile(file: string): void {
  const lockFile = `${resolve(file)}.lock`
  mkdirSync(dirname(lockFile), { recursive: true })
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' })
      process.once('exit', () => {
        if (readLockOwner(lockFile) === process.pid) rmSync(lockFile, { force: true })
      })
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = readLockOwner(lockFile)
      if (owner !== undefined && isRunning(owner))
        throw new ValidationError(
          `The demo database ${resolve(file)} is in use by process ${owner} (another \`lectern demo\`?): stop it first, or delete ${lockFile} if that process is not a Lectern demo`,
        )
      rmSync(lockFile, { force: true })
    }
  }
  throw new ValidationError(
    `Could not lock the demo database ${resolve(file)}: ${lockFile} keeps reappearing`,
  )
}

/**
 * The demo started in this directory with its default database, if it is running now: the
 * process holding the lock of `./data/demo.db`, and that file.
 */
export function runningDemo(): { pid: number; file: string } | undefined {
  const file = resolve(DEMO_DATABASE_FILE)
  const pid = readLockOwner(`${file}.lock`)
  return pid !== undefined && isRunning(pid) ? { pid, file } : undefined
}

function readLockOwner(lockFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockFile, 'utf8').trim())
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** A word a POSIX shell reads back unchanged, quoted only when it needs to be. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`
}
