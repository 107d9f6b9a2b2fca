import type { Lectern } from './client.js'
import { RedirectLimitError } from './errors.js'
import {
  createRedirectMatcher,
  type RedirectMatch,
  type RedirectMatcher,
  type RedirectRule,
  type RedirectSource,
} from './redirect-matcher.js'

export interface RedirectLoaderOptions {
  /**
   * Milliseconds between refreshes (default 60 000); `0` never refreshes by itself (call
   * `refresh()`). An unchanged list costs one `304` per page, thanks to conditional requests.
   */
  refreshInterval?: number
  /** Told about a failed refresh; the redirects loaded before keep applying meanwhile. */
  onError?: (error: unknown) => void
  /**
   * The most active redirects the loader holds (default 100 000). A load that finds more fails
   * with a `RedirectLimitError`, like any failed load, instead of growing without bound.
   */
  maxRedirects?: number
}

/** The most redirects a loader holds unless `maxRedirects` says otherwise. */
export const DEFAULT_MAX_REDIRECTS = 100_000

/** A redirect matcher kept up to date with the API's active redirects. */
export interface RedirectLoader extends RedirectSource {
  /** The answer of the latest redirects loaded (see {@link RedirectMatcher.match}). */
  match(target: string): RedirectMatch | null
  /** The matcher built from the latest redirects loaded. */
  readonly matcher: RedirectMatcher
  /** When the redirects were last loaded (or found unchanged). */
  readonly loadedAt: Date
  /** The error of the latest refresh if it failed, else `null`. */
  readonly lastError: unknown
  /**
   * Loads the active redirects now (revalidating every page with `If-None-Match`) and returns the
   * new matcher. Calls made while a refresh is running share it. A failure rejects, and the
   * previous matcher stays.
   */
  refresh(): Promise<RedirectMatcher>
  /** Stops the periodic refresh. */
  close(): void
}

/**
 * Loads every active redirect from the API (`redirects.all({ active: true })`), builds a matcher,
 * and refreshes it every `refreshInterval` milliseconds. Resolves once the first load has worked,
 * so a server can await it before it starts answering; rejects if that first load fails.
 *
 * ```ts
 * const redirects = await createRedirectLoader(lectern, { refreshInterval: 60_000 })
 * redirects.match('/old?x=1') // { status: 301, location: '/new?x=1' }, or null
 * ```
 */
export async function createRedirectLoader(
  client: Pick<Lectern, 'redirects'>,
  options: RedirectLoaderOptions = {},
): Promise<RedirectLoader> {
  const refreshInterval = options.refreshInterval ?? 60_000
  if (!(Number.isInteger(refreshInterval) && refreshInterval >= 0))
    throw new TypeError(`refreshInterval must be a whole number of milliseconds (got ${refreshInterval})`)
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS
  if (!(Number.isInteger(maxRedirects) && maxRedirects >= 1))
    throw new TypeError(`maxRedirects must be a whole number of at least 1 (got ${maxRedirects})`)

  const load = async (): Promise<RedirectMatcher> => {
    const rules: RedirectRule[] = []
    for await (const redirect of client.redirects.all({ active: true })) {
      if (rules.length >= maxRedirects) throw new RedirectLimitError(maxRedirects)
      rules.push(redirect)
    }
    return createRedirectMatcher(rules)
  }

  let matcher = await load()
  let loadedAt = new Date()
  let lastError: unknown = null
  let running: Promise<RedirectMatcher> | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let closed = false

  const refresh = (): Promise<RedirectMatcher> => {
    running ??= load()
      .then(
        (fresh) => {
          matcher = fresh
          loadedAt = new Date()
          lastError = null
          return fresh
        },
        (error: unknown) => {
          lastError = error
          throw error
        },
      )
      .finally(() => {
        running = undefined
      })
    return running
  }

  const schedule = () => {
    if (closed || refreshInterval === 0) return
    timer = setTimeout(() => {
      refresh().then(schedule, (error: unknown) => {
        options.onError?.(error)
        schedule()
      })
    }, refreshInterval)
    // In Node a pending refresh must not keep the process alive; browsers' timers have no `unref`.
    ;(timer as unknown as { unref?: () => void }).unref?.()
  }
  schedule()

  return {
    match: (target) => matcher.match(target),
    get matcher() {
      return matcher
    },
    get loadedAt() {
      return loadedAt
    },
    get lastError() {
      return lastError
    },
    refresh,
    close() {
      closed = true
      clearTimeout(timer)
    },
  }
}
