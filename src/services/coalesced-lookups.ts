interface Queued<V> {
  promise: Promise<V>
  resolve(value: V): void
  reject(reason: unknown): void
}

function queued<V>(): Queued<V> {
  let resolve!: (value: V) => void
  let reject!: (reason: unknown) => void
  const promise = new Promise<V>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Per key: whether a lookup of it is reading the store, and the callers waiting for the next one. */
interface KeyState<V> {
  running: boolean
  next: Queued<V> | null
}

/**
 * Shares lookups of the same key among callers without ever answering a caller from a lookup that
 * started before it called. A lookup does not start when it is asked for but at the end of the
 * event loop's turn (`setImmediate`), so every call of that key made during the turn — the requests
 * whose bytes were read in it — joins it; a call made while a lookup of its key is reading the store
 * waits for the next one, which starts when that one ends. Every answer therefore reflects the store
 * at some moment after its caller asked: a change committed before the call is always seen (a
 * revoked key is refused on the very next request), while a burst of requests for one key costs one
 * lookup per turn or round trip instead of one each. This holds for a store that answers at once
 * (SQLite, where the shared read is the gain) as for one that answers later (PostgreSQL, where
 * callers arriving during a round trip share the next). A caller waits at most for the lookup in
 * flight plus its own. A lookup that fails fails the callers waiting behind it too. Memory holds
 * only the keys with a lookup pending or in flight.
 */
export function sharedFreshLookups<K, V>(lookup: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const keys = new Map<K, KeyState<V>>()

  const start = (key: K, state: KeyState<V>) => {
    const batch = state.next
    if (batch === null) {
      keys.delete(key)
      return
    }
    state.running = true
    state.next = null
    let result: Promise<V>
    try {
      result = lookup(key)
    } catch (error) {
      // A lookup that throws instead of rejecting must not leave its key marked in flight forever.
      result = Promise.reject(error)
    }
    result.then(
      (value) => {
        batch.resolve(value)
        state.running = false
        if (state.next) setImmediate(start, key, state)
        else keys.delete(key)
      },
      (error: unknown) => {
        // A failure reached the store after the callers waiting behind it asked, so it is a true
        // answer for them too: they get it at once instead of waiting for a second lookup (with the
        // database unreachable, that would be a second full timeout).
        batch.reject(error)
        state.next?.reject(error)
        keys.delete(key)
      },
    )
  }

  return (key: K) => {
    let state = keys.get(key)
    if (state === undefined) {
      state = { running: false, next: null }
      keys.set(key, state)
    }
    // A lookup that has not started yet reads the store after this call: joining it is fresh.
    if (state.next) return state.next.promise
    state.next = queued<V>()
    if (!state.running) setImmediate(start, key, state)
    return state.next.promise
  }
}
