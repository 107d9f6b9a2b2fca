import { describe, expect, it } from 'vitest'
import { ResponseCache } from './response-cache.js'

/** A build that waits for `release` before answering, counting how often it was started. */
function gatedBuild(text: string) {
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const build = {
    calls: 0,
    release,
    run: async () => {
      build.calls += 1
      await gate
      return text
    },
  }
  return build
}

describe('response cache', () => {
  it('builds a page once for all the requests that miss it together at one version', async () => {
    const cache = new ResponseCache()
    const build = gatedBuild('{"data":[1]}')
    const bodies = Array.from({ length: 10 }, () => cache.body('page-1', 7, '"t"', build.run))
    build.release()
    const sent = await Promise.all(bodies)
    expect(build.calls).toBe(1)
    for (const body of sent) expect(String(body)).toBe('{"data":[1]}')
  })

  it('builds again for a request that read a newer version while an older build runs', async () => {
    const cache = new ResponseCache()
    const older = gatedBuild('old')
    const newer = gatedBuild('new')
    const first = cache.body('page-1', 7, '"a"', older.run)
    const second = cache.body('page-1', 8, '"b"', newer.run)
    older.release()
    newer.release()
    expect(String(await first)).toBe('old')
    expect(String(await second)).toBe('new')
    expect([older.calls, newer.calls]).toEqual([1, 1])
  })

  it('fails the requests that joined a failed build, and builds anew for the next one', async () => {
    const cache = new ResponseCache()
    let calls = 0
    const failing = async () => {
      calls += 1
      await Promise.resolve()
      throw new Error('database unreachable')
    }
    const joined = [cache.body('page-1', 7, '"t"', failing), cache.body('page-1', 7, '"t"', failing)]
    for (const result of await Promise.allSettled(joined)) expect(result.status).toBe('rejected')
    expect(calls).toBe(1)
    expect(String(await cache.body('page-1', 7, '"t"', async () => 'recovered'))).toBe('recovered')
  })

  it('keeps a body built after a second miss and serves it while its version is current', async () => {
    const cache = new ResponseCache()
    await cache.body('page-1', 7, '"t"', async () => 'first')
    await cache.body('page-1', 7, '"t"', async () => 'second')
    expect(cache.get('page-1', 7)?.body.toString()).toBe('second')
    expect(cache.get('page-1', 8)).toBeUndefined()
  })
})
