import { randomBytes, type ScryptOptions, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto'

/** scrypt's work factors: the cost (N), the block size (r) and the parallelism (p). */
export interface ScryptCost {
  N: number
  r: number
  p: number
}

/** OWASP's scrypt recommendation: N=2^17, r=8, p=1 (128 MiB of work memory per hash). */
export const PASSWORD_COST: Readonly<ScryptCost> = Object.freeze({ N: 2 ** 17, r: 8, p: 1 })
const KEY_LENGTH = 32

/** The cost new passwords are hashed at in this process: always `PASSWORD_COST` outside the test suite. */
let hashingCost: Readonly<ScryptCost> = PASSWORD_COST

/**
 * Sets the cost of the passwords this process hashes from now on. Only the test suite calls it
 * (`test/password-cost.ts`): it hashes hundreds of passwords on its way to what it proves (sessions,
 * roles, the audit log), and at full cost they took about a fifth of its running time. A check always
 * uses the cost its hash names, so hashes of either cost keep working; the tests of hashing itself
 * run at full cost.
 */
export function setPasswordCostForTests(cost: Readonly<ScryptCost>): void {
  hashingCost = Object.freeze({ ...cost })
}

/**
 * How many hashes run at once in this process, how many hashes may wait in one line, and how many
 * current-password checks one user may have waiting or running. Each hash holds 128 MiB while it
 * runs, so unbounded concurrency lets anyone who can post a sign-in form grow the process by that
 * much per request (40 at once took it from 109 to 622 MB).
 */
export const PASSWORD_HASHING = { concurrency: 2, maxQueue: 16, maxChecksPerUser: 1 }

/**
 * The lines hashes wait in: sign-ins, the current-password checks of signed-in users, and everything
 * else (the command line, an admin creating a user). Lines take turns at every free slot and each is
 * bounded on its own, so a crowd in one line can neither fill another nor hold it up for long.
 */
export const HASHING_LINES = ['sign-in', 'account', 'other'] as const
export type HashingLine = (typeof HASHING_LINES)[number]

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

/** Hashes running now, waiting (in all and by line), and the most that ever ran at once. */
export interface HashingLoad {
  running: number
  waiting: number
  waitingByLine: Record<HashingLine, number>
  peakRunning: number
}

// A two-slot semaphore with one FIFO queue per line: small enough to write here rather than add a dependency.
const load = { running: 0, peakRunning: 0 }
const queues: Record<HashingLine, (() => void)[]> = { 'sign-in': [], account: [], other: [] }
/** Where the next turn starts: the line after the one served last. */
let turn = 0
/** Hashes waiting or running per owner, for `maxPerOwner`. */
const owners = new Map<string, number>()

/** The hashing queue's current state. */
export function hashingLoad(): Readonly<HashingLoad> {
  const waitingByLine = {} as Record<HashingLine, number>
  for (const line of HASHING_LINES) waitingByLine[line] = queues[line].length
  const waiting = HASHING_LINES.reduce((sum, line) => sum + queues[line].length, 0)
  return { running: load.running, waiting, waitingByLine, peakRunning: load.peakRunning }
}

/** Where a hash or a check waits, and when it refuses (`PasswordHashingBusyError`) rather than wait. */
export interface HashingOptions {
  /** The line to wait in (default `other`). */
  line?: HashingLine
  /** Refuses when this many already wait in the same line. */
  maxQueue?: number
  /** Whose hash this is (a user id): refuses when they already have `maxPerOwner` waiting or running. */
  owner?: string
  maxPerOwner?: number
}

/** The next waiter, taking the lines in turn, so that each line gets its share of the slots. */
function nextWaiter(): (() => void) | undefined {
  for (let i = 0; i < HASHING_LINES.length; i++) {
    const index = (turn + i) % HASHING_LINES.length
    const waiter = queues[HASHING_LINES[index]].shift()
    if (waiter) {
      turn = (index + 1) % HASHING_LINES.length
      return waiter
    }
  }
  return undefined
}

/**
 * Runs `task` in one of the process's hashing slots, waiting for one in its line when all are taken
 * (or refusing, as `options` say). Exported for callers that must hold a slot across more than a hash.
 */
export async function withHashingSlot<T>(options: HashingOptions, task: () => Promise<T>): Promise<T> {
  const { owner, maxPerOwner } = options
  if (owner !== undefined && maxPerOwner !== undefined && (owners.get(owner) ?? 0) >= maxPerOwner)
    throw new PasswordHashingBusyError()
  const queue = queues[options.line ?? 'other']
  if (
    load.running >= PASSWORD_HASHING.concurrency &&
    options.maxQueue !== undefined &&
    queue.length >= options.maxQueue
  )
    throw new PasswordHashingBusyError()
  if (owner !== undefined) owners.set(owner, (owners.get(owner) ?? 0) + 1)
  try {
    // The slot passes straight from a finished hash to its waiter, so a newcomer cannot overtake the queue.
    if (load.running >= PASSWORD_HASHING.concurrency)
      await new Promise<void>((resolve) => queue.push(resolve))
    else load.running += 1
    load.peakRunning = Math.max(load.peakRunning, load.running)
    try {
      return await task()
    } finally {
      const next = nextWaiter()
      if (next) next()
      else load.running -= 1
    }
  } finally {
    if (owner !== undefined) {
      const left = (owners.get(owner) ?? 1) - 1
      if (left === 0) owners.delete(owner)
      else owners.set(owner, left)
    }
  }
}

function scrypt(password: string, salt: Buffer, params: Readonly<ScryptCost>): Promise<Buffer> {
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
  const cost = hashingCost
  const hash = await withHashingSlot(options, () => scrypt(password, salt, cost))
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), hash.toString('base64')].join('$')
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
