/**
 * What `work` settles to, or `undefined` once `ms` have passed (or `signal` aborted) first: for a
 * wait that must end whatever the work does. A rejection of `work` in time rejects; one after the
 * deadline is left to whoever else holds `work`. The timer never keeps the process alive.
 */
export function settledWithin<T>(work: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', expire)
    }
    const expire = () => {
      done()
      resolve(undefined)
    }
    const timer = setTimeout(expire, ms).unref()
    signal?.addEventListener('abort', expire, { once: true })
    work.then(
      (value) => {
        done()
        resolve(value)
      },
      (error: unknown) => {
        done()
        reject(error)
      },
    )
  })
}
