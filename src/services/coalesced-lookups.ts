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

/**
 * How many lookups of one key may read the store at once. With one, a call made while it runs waits
 * for it and then for its own (one and a half round trips on average); with two, it starts its own
 * at the end of the turn. A third would add reads without shortening any wait much.
 */
const MAX_IN_FLIGHT = 2

/** Per key: how many of its lookups are reading the store, and the callers waiting for the next one. */
interface KeyState<V> {
  inFlight: number
  /** Whether the start of the next lookup is already set for the end of the turn. */
  starting: boolean
  next: Queued<V> | null
}

/**
 * Shares lookups of the same key among callers without ever answering a caller from a lookup that
 * started before it called. A lookup does not start when it is asked for but at the end of the
 * event loop's turn (`setImmediate`), so every call of that key made during the turn — the requests
 * whose bytes were read in it — joins it. Up to `MAX_IN_FLIGHT` lookups of a key read the store at
 * once; a call made while that many are reading waits for the next one, which starts when one of
 * them ends. Every answer therefore reflects the store at some moment after its caller asked: a
 * change committed before the call is always seen (a revoked key is refused on the very next
 * request), while a burst of requests for one key costs one lookup per turn, and at most two per
 * round trip, instead of one each. This holds for a store that answers at once (SQLite, where the
 * shared read is the gain) as for one that answers later (PostgreSQL, where callers arriving during
 * a round trip share the next). A lookup that fails fails the callers waiting for the next one too.
 * Memory holds only the keys with a lookup pending or in flight.
 */
export function sharedFreshLookups<K, V>(lookup: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const keys = new Map<K, KeyState<V>>()

  /** Sets the start of the next lookup of `key` for the end of this turn, unless it is set already. */
  const startSoon = (key: K, state: KeyState<V>) => {
    if (state.starting) return
    state.starting = true
    setImmediate(start, key, state)
  }
  /** Forgets `key` once nothing of it is pending or in flight. */
  const settle = (key: K, state: KeyState<V>) => {
    if (state.inFlight === 0 && state.next === null && !state.starting && keys.get(key) === state)
      keys.delete(key)
  }

  const start = (key: K, state: KeyState<V>) => {
    state.starting = false
    const batch = state.next
    if (batch === null) {
      settle(key, state)
      return
    }
    state.inFlight += 1
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
        state.inFlight -= 1
        if (state.next) startSoon(key, state)
        else settle(key, state)
      },
      (error: unknown) => {
        // A failure reached the store after the callers waiting for the next lookup asked, so it is
        // a true answer for them too: they get it at once instead of waiting for another lookup
        // (with the database unreachable, that would be another full timeout).
        batch.reject(error)
        state.next?.reject(error)
        state.next = null
        state.inFlight -= 1
        settle(key, state)
      },
    )
  }

  return (key: K) => {
    let state = keys.get(key)
    if (state === undefined) {
      state = { inFlight: 0, starting: false, next: null }
      keys.set(key, state)
    }
    // A lookup that has not started yet reads the store after this call: joining it is fresh.
    if (state.next) return state.next.promise
    state.next = queued<V>()
    if (state.inFlight < MAX_IN_FLIGHT) startSoon(key, state)
    return state.next.promise
  }
}
