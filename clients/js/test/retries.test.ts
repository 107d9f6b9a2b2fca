import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { TEST_DIALECT } from '../../../test/harness.js'
import { RateLimitError, ServiceUnavailableError } from '../src/index.js'
import { type RunningLectern, recordingFetch, startLectern } from './support.js'

describe('rate limits and retries against a running server', () => {
  let server: RunningLectern | undefined
  afterEach(async () => {
    await server?.ctx.close()
    server = undefined
  })

  it('waits out a 429 for Retry-After and then succeeds', async () => {
    // One fake clock for both sides: the client's wait moves the server's rate-limit window on.
    let now = Date.now()
    server = await startLectern({ perSecond: 2, perHour: 1000, clock: () => now })
    const { fetch, calls } = recordingFetch()
    const waits: number[] = []
    const sleep = async (ms: number) => {
      waits.push(ms)
      now += ms
    }
    const client = server.client({ fetch, sleep, retry: { maxRetries: 3 } })
    await client.forms.list()
    await client.forms.list()
    const { meta } = await client.forms.list()
    expect(meta.total).toBe(0)
    // The same list asked again is revalidated: unchanged, it costs a 304, before and after the wait.
    expect(calls.map((call) => call.status)).toEqual([200, 304, 429, 304])
    // The server said Retry-After: 1; the client never comes back sooner, and adds some jitter.
    expect(waits).toHaveLength(1)
    expect(waits[0]).toBeGreaterThanOrEqual(1000)
    expect(waits[0]).toBeLessThanOrEqual(1500)
    expect(client.rateLimit).toMatchObject({ limit: 1000, remaining: 997 })
  })

  it('throws a RateLimitError carrying Retry-After when retries are off', async () => {
    server = await startLectern({ perSecond: 1, perHour: 1000 })
    const client = server.client({ retry: false })
    await client.pages.list()
    const error = await client.pages.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitError)
    expect(error).toMatchObject({ status: 429, type: 'rate_limit_exceeded', retryAfter: 1 })
    expect(client.rateLimit).toMatchObject({ limit: 1000, remaining: 999 })
  })

  it('does not wait out an exhausted hourly quota: it throws at once with the wait', async () => {
    server = await startLectern({ perSecond: 100, perHour: 2 })
    const { fetch, calls } = recordingFetch()
    const waits: number[] = []
    const client = server.client({ fetch, sleep: async (ms) => void waits.push(ms) })
    await client.redirects.list()
    await client.redirects.list()
    const error = await client.redirects.list().catch((e: unknown) => e)
    expect(waits).toEqual([])
    expect(error).toBeInstanceOf(RateLimitError)
    expect((error as RateLimitError).retryAfter).toBeGreaterThan(3000)
    expect(calls.map((call) => call.status)).toEqual([200, 304, 429])
    expect(client.rateLimit).toMatchObject({ limit: 2, remaining: 0 })
  })

  it('gives up after maxRetries, throwing the last RateLimitError', async () => {
    // The server's clock stands still, so the per-second window never frees up.
    const frozen = Date.now()
    server = await startLectern({ perSecond: 1, perHour: 1000, clock: () => frozen })
    const { fetch, calls } = recordingFetch()
    const waits: number[] = []
    const client = server.client({
      fetch,
      sleep: async (ms) => void waits.push(ms),
      retry: { maxRetries: 2 },
    })
    await client.forms.list()
    const error = await client.forms.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitError)
    expect(calls.map((call) => call.status)).toEqual([200, 429, 429, 429])
    expect(waits).toHaveLength(2)
  })

  it.runIf(TEST_DIALECT === 'sqlite')(
    'waits out a 503 while the database is unavailable, and succeeds once it is back',
    async () => {
      server = await startLectern({ perSecond: 100, perHour: 1000 })
      // Waiting the full busy timeout on every request would only slow the test down.
      await sql`PRAGMA busy_timeout = 50`.execute(server.ctx.database.db)
      const { fetch, calls } = recordingFetch()
      const client = server.client({ fetch, retry: { maxRetries: 2, maxDelayMs: 10_000 } })
      const locker = new SQLite(server.ctx.databaseUrl.slice('sqlite:'.length))
      try {
        locker.exec('BEGIN EXCLUSIVE')
        locker.prepare('UPDATE api_keys SET name = name').run()
        const listing = client.forms.list()
        await new Promise((resolve) => setTimeout(resolve, 300))
        locker.exec('COMMIT')
        expect((await listing).meta.total).toBe(0)
      } finally {
        locker.close()
      }
      expect(calls.map((call) => call.status)).toEqual([503, 200])
    },
  )

  it.runIf(TEST_DIALECT === 'sqlite')('throws a ServiceUnavailableError when retries are off', async () => {
    server = await startLectern({ perSecond: 100, perHour: 1000 })
    await sql`PRAGMA busy_timeout = 50`.execute(server.ctx.database.db)
    const locker = new SQLite(server.ctx.databaseUrl.slice('sqlite:'.length))
    try {
      locker.exec('BEGIN EXCLUSIVE')
      locker.prepare('UPDATE api_keys SET name = name').run()
      const error = await server
        .client({ retry: false })
        .forms.list()
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ServiceUnavailableError)
      expect(error).toMatchObject({ status: 503, type: 'service_unavailable', retryAfter: 5 })
      locker.exec('COMMIT')
    } finally {
      locker.close()
    }
  })
})
