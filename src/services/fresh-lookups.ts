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
 * Shares lookups of the same key among concurrent callers without ever answering a caller from a
 * lookup that started before it called. While a lookup of a key runs, later callers of that key
 * queue; when it ends, one new lookup starts and answers all of them. Every answer therefore
 * reflects the store at some moment after its caller asked: a change committed before the call is
 * always seen (a revoked key is refused on the very next request), while a burst of requests for
 * one key costs one lookup per round trip instead of one each. A caller waits at most for the
 * lookup in flight plus its own; with nothing in flight it starts at once, so a lone caller waits
 * no longer than without sharing. A lookup that fails fails its queued callers too. Memory holds only the keys with a lookup in flight.
 *
 * A lookup that completes synchronously (SQLite) is never shared: no other call can arrive
 * before it ends.
 */
export function sharedFreshLookups<K, V>(lookup: (key: K) => Promise<V>): (key: K) => Promise<V> {
  // A key is present while a lookup of it runs; its value is the batch queued for the next one.
  const inFlight = new Map<K, Queued<V> | null>()

  const start = (key: K): Promise<V> => {
    inFlight.set(key, null)
    let result: Promise<V>
    try {
      result = lookup(key)
    } catch (error) {
      // A lookup that throws instead of rejecting must not leave its key marked in flight forever.
      result = Promise.reject(error)
    }
    const next = () => {
      const waiting = inFlight.get(key)
      if (waiting) start(key).then(waiting.resolve, waiting.reject)
      else inFlight.delete(key)
    }
    // A failure reached the store after the queued callers asked, so it is a true answer for them
    // too: they get it at once instead of waiting for a second lookup (with the database
    // unreachable, that would be a second full timeout).
    const failed = (error: unknown) => {
      const waiting = inFlight.get(key)
      inFlight.delete(key)
      waiting?.reject(error)
    }
    result.then(next, failed)
    return result
  }

  return (key: K) => {
    if (!inFlight.has(key)) return start(key)
    let waiting = inFlight.get(key)
    if (!waiting) {
      waiting = queued<V>()
      inFlight.set(key, waiting)
    }
    return waiting.promise
  }
}
