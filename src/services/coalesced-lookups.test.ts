import { describe, expect, it } from 'vitest'
import { sharedFreshLookups } from './coalesced-lookups.js'

/** Lets the event loop finish its turn: lookups asked for during it start. */
const endOfTurn = () => new Promise((resolve) => setImmediate(resolve))

/** A store whose lookups finish only when the test says so, recording the value each one read. */
function slowStore() {
  let value = 0
  const pending: Array<() => void> = []
  const started: string[] = []
  const lookup = (key: string) =>
    new Promise<string>((resolve) => {
      started.push(key)
      // The value is read when the lookup reaches the store, as a database query would read it.
      const read = `${key}@${value}`
      pending.push(() => resolve(read))
    })
  return {
    lookup,
    started,
    write: () => {
      value += 1
    },
    /**
     * Lets the turn end (so lookups asked for start), the oldest unfinished lookup finish, and the
     * callbacks it triggers run, including the start of the lookup queued behind it.
     */
    finishOne: async () => {
      await endOfTurn()
      pending.shift()?.()
      await endOfTurn()
      await endOfTurn()
    },
  }
}

describe('sharedFreshLookups', () => {
  it('starts one lookup per key at the end of the turn, shared by every call of that key made in it', async () => {
    const store = slowStore()
    const shared = sharedFreshLookups(store.lookup)
    const a = [shared('k'), shared('k'), shared('k')]
    const b = shared('other')
    expect(store.started).toEqual([])
    await endOfTurn()
    expect(store.started).toEqual(['k', 'other'])
    await store.finishOne()
    await store.finishOne()
    expect(await Promise.all(a)).toEqual(['k@0', 'k@0', 'k@0'])
    expect(await b).toBe('other@0')
  })

  it('never answers a call from a lookup that started before the call, so a prior write is always seen', async () => {
    const store = slowStore()
    const shared = sharedFreshLookups(store.lookup)
    const first = shared('k')
    await endOfTurn()
    // A write committed after the first lookup read the store, then a new call.
    store.write()
    const second = shared('k')
    await store.finishOne()
    expect(await first).toBe('k@0')
    await store.finishOne()
    expect(await second).toBe('k@1')
  })

  it('reads a store that answers at once (SQLite) once per turn, after every call of the turn', async () => {
    let value = 0
    let reads = 0
    const shared = sharedFreshLookups(async (key: string) => {
      reads += 1
      return `${key}@${value}`
    })
    const early = shared('k')
    // A write made later in the same turn, before the shared read: the earlier caller sees it too,
    // which is fresh for it as well (the read happened after it asked).
    value = 1
    const late = shared('k')
    expect(await Promise.all([early, late])).toEqual(['k@1', 'k@1'])
    expect(reads).toBe(1)
    value = 2
    expect(await shared('k')).toBe('k@2')
    expect(reads).toBe(2)
  })

  it('starts a second lookup for calls made while one reads, and queues later calls for the next', async () => {
    const store = slowStore()
    const shared = sharedFreshLookups(store.lookup)
    const first = shared('k')
    await endOfTurn()
    store.write()
    // Made while the first reads: they start their own at the end of the turn, reading the write.
    const second = [shared('k'), shared('k')]
    await endOfTurn()
    expect(store.started).toHaveLength(2)
    store.write()
    // Made while two read: they wait, and share one lookup that starts when one of the two ends.
    const third = [shared('k'), shared('k'), shared('k')]
    await endOfTurn()
    expect(store.started).toHaveLength(2)
    await store.finishOne()
    expect(store.started).toHaveLength(3)
    await store.finishOne()
    await store.finishOne()
    expect(await first).toBe('k@0')
    expect(await Promise.all(second)).toEqual(['k@1', 'k@1'])
    expect(await Promise.all(third)).toEqual(['k@2', 'k@2', 'k@2'])
    expect(store.started).toHaveLength(3)
  })

  it('passes a failed lookup to its own callers only, and looks up afresh for the next', async () => {
    let calls = 0
    const shared = sharedFreshLookups(async (key: string) => {
      calls += 1
      if (calls === 1) throw new Error('database unavailable')
      return key
    })
    await expect(shared('k')).rejects.toThrow('database unavailable')
    await expect(shared('k')).resolves.toBe('k')
  })

  it('fails the calls queued behind a failing lookup at once, so an unreachable store costs one timeout', async () => {
    const failures: Array<(error: Error) => void> = []
    const releases: Array<() => void> = []
    let calls = 0
    const shared = sharedFreshLookups(
      (key: string) =>
        new Promise<string>((resolve, reject) => {
          calls += 1
          if (calls === 1) failures.push(reject)
          else if (calls === 2) releases.push(() => resolve(key))
          else resolve(key)
        }),
    )
    const first = shared('k')
    await endOfTurn()
    // A second lookup, held open, so that the next calls queue.
    const second = shared('k')
    await endOfTurn()
    const queued = [shared('k'), shared('k')]
    failures[0]?.(new Error('database unavailable'))
    await expect(first).rejects.toThrow('database unavailable')
    for (const call of queued) await expect(call).rejects.toThrow('database unavailable')
    expect(calls).toBe(2)
    releases[0]?.()
    await expect(second).resolves.toBe('k')
    await expect(shared('k')).resolves.toBe('k')
  })

  it('answers the next call afresh after a lookup that threw instead of rejecting', async () => {
    let calls = 0
    const shared = sharedFreshLookups((key: string) => {
      calls += 1
      if (calls === 1) throw new Error('bad statement')
      return Promise.resolve(key)
    })
    await expect(shared('k')).rejects.toThrow('bad statement')
    await expect(shared('k')).resolves.toBe('k')
  })

  it('keeps nothing once no lookup is pending or in flight', async () => {
    const store = slowStore()
    const shared = sharedFreshLookups(store.lookup)
    const one = shared('k')
    await store.finishOne()
    await one
    const two = shared('k')
    await endOfTurn()
    expect(store.started).toEqual(['k', 'k'])
    await store.finishOne()
    expect(await two).toBe('k@0')
  })
})
