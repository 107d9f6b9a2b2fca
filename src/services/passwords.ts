import { randomBytes, type ScryptOptions, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto'

// OWASP's scrypt recommendation: N=2^17, r=8, p=1 (128 MiB of work memory per hash).
const PARAMS = { N: 2 ** 17, r: 8, p: 1 }
const KEY_LENGTH = 32

/**
 * How many hashes run at once in this process, and how many sign-ins may wait for one. Each hash
 * holds 128 MiB while it runs, so unbounded concurrency lets anyone who can post a sign-in form
 * grow the process by that much per request (40 at once took it from 109 to 622 MB).
 */
export const PASSWORD_HASHING = { concurrency: 2, maxQueue: 16 }

/**
 * The password hashing queue is full: the caller asked not to wait behind this many others. The
 * dashboard answers 503 with `Retry-After`; commands that must hash (the CLI, user changes) wait.
 */
export class PasswordHashingBusyError extends Error {
  readonly retryAfterSeconds = 5
  constructor() {
    super('Too many sign-ins are being checked right now, please try again in a few seconds')
    this.name = 'PasswordHashingBusyError'
  }
}

/** Hashes running now, waiting, and the most that ever ran at once, for tests and metrics. */
export interface HashingLoad {
  running: number
  waiting: number
  peakRunning: number
}

// A two-slot semaphore with a FIFO queue: small enough to write here rather than add a dependency.
const load: HashingLoad = { running: 0, waiting: 0, peakRunning: 0 }
const waiters: (() => void)[] = []

/** The hashing queue's current state. */
export function hashingLoad(): Readonly<HashingLoad> {
  return { ...load }
}

/** Options of a hash or a check: `maxQueue` refuses (`PasswordHashingBusyError`) instead of waiting behind that many. */
export interface HashingOptions {
  maxQueue?: number
}

async function withHashingSlot<T>(options: HashingOptions, task: () => Promise<T>): Promise<T> {
  if (load.running >= PASSWORD_HASHING.concurrency) {
    if (options.maxQueue !== undefined && load.waiting >= options.maxQueue)
      throw new PasswordHashingBusyError()
    load.waiting += 1
    await new Promise<void>((resolve) => waiters.push(resolve))
    load.waiting -= 1
  }
  load.running += 1
  load.peakRunning = Math.max(load.peakRunning, load.running)
  try {
    return await task()
  } finally {
    load.running -= 1
    // The slot passes straight to the next waiter, so a newcomer cannot overtake the queue.
    waiters.shift()?.()
  }
}

function scrypt(password: string, salt: Buffer, params: typeof PARAMS): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * 1024 * 1024 }
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  )
}

/** A self-describing hash: `scrypt$N$r$p$<salt b64>$<hash b64>`, so parameters can be raised later. */
export async function hashPassword(password: string, options: HashingOptions = {}): Promise<string> {
  const salt = randomBytes(16)
  const hash = await withHashingSlot(options, () => scrypt(password, salt, PARAMS))
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), hash.toString('base64')].join('$')
}

/**
 * Checks a password against a stored hash in constant time; a malformed hash never matches. Waits
 * for a hashing slot, or with `maxQueue` throws `PasswordHashingBusyError` when that many wait already.
 */
export async function verifyPassword(
  password: string,
  stored: string,
  options: HashingOptions = {},
): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$')
  if (scheme !== 'scrypt' || !salt || !hash) return false
  const expected = Buffer.from(hash, 'base64')
  const actual = await withHashingSlot(options, () =>
    scrypt(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) }),
  )
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}
