import type { LightMyRequestResponse } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApiKey } from '../factories.js'
import { createTestContext, type TestContext, type TestContextOptions } from '../harness.js'
import { GENEROUS_LIMITS, request } from '../security-suite.js'

/** The small surprises a new API user meets: misspelt parameters, 304s, and which limit said no. */
describe('the API for a first-time caller', () => {
  const opened: TestContext[] = []
  afterEach(async () => {
    for (const context of opened.splice(0)) await context.close()
  })
  const setup = async (options: TestContextOptions = { ...GENEROUS_LIMITS }) => {
    const ctx = await createTestContext(options)
    opened.push(ctx)
    const key = await buildApiKey(ctx.database.db)
    return {
      ctx,
      get: (path: string, headers: Record<string, string> = {}) =>
        request(ctx.app, path, key.authorization, { headers }),
    }
  }
  const warning = (res: LightMyRequestResponse) => res.headers['lectern-warning']

  it('ignores a misspelt pageSize as the SPEC says, but names it in a Lectern-Warning header', async () => {
    const { get } = await setup()
    const misspelt = await get('/api/v1/forms?pagesize=5')
    expect(misspelt.statusCode).toBe(200)
    expect(misspelt.json().meta.pageSize).toBe(20)
    expect(warning(misspelt)).toBe("unknown query parameter 'pagesize' ignored")

    const several = await get('/api/v1/page-builder?published=true&sort=title&limit=5')
    expect(warning(several)).toBe("unknown query parameters 'sort', 'limit' ignored")
    // A filter of another endpoint is unknown here.
    expect(warning(await get('/api/v1/forms/form_x/submissions?active=true'))).toBe(
      "unknown query parameter 'active' ignored",
    )
    expect(warning(await get('/api/v1/forms?page=1&pageSize=5&active=true'))).toBeUndefined()
  })

  it('keeps the warning a valid header whatever the parameter names hold', async () => {
    const { get } = await setup()
    const res = await get('/api/v1/forms?%0D%0AX-Evil%3A%201=1&%C3%BCber=2')
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-evil']).toBeUndefined()
    expect(warning(res)).toBe("unknown query parameters '%0D%0AX-Evil%3A%201', '%C3%BCber' ignored")
    const many = await get(`/api/v1/forms?${Array.from({ length: 8 }, (_, i) => `p${i}=1`).join('&')}`)
    expect(warning(many)).toBe("unknown query parameters 'p0', 'p1', 'p2', 'p3', 'p4' and 3 more ignored")
  })

  it('names pageSize in the page-size error', async () => {
    const { get } = await setup()
    const res = await get('/api/v1/forms?pageSize=500')
    expect(res.statusCode).toBe(400)
    expect(res.json().message).toBe("Page size (parameter 'pageSize') must be between 1 and 100")
  })

  it('sends a 304 without a Content-Type, since it has no body', async () => {
    const { get } = await setup()
    const first = await get('/api/v1/forms')
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8')
    const again = await get('/api/v1/forms', { 'if-none-match': String(first.headers.etag) })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    expect(again.headers['content-type']).toBeUndefined()
    expect(again.headers.etag).toBe(first.headers.etag)
  })

  it('says which limit refused a request, and shows both limits in the IETF RateLimit fields', async () => {
    // A clock the test moves: the burst is exact whatever the machine's speed.
    const start = Math.floor(Date.now() / 1000) * 1000
    let now = start
    const { get } = await setup({ perHour: 5, perSecond: 2, clock: () => now })
    const fields = (res: LightMyRequestResponse) => ({
      status: res.statusCode,
      policy: res.headers['ratelimit-policy'],
      limit: String(res.headers.ratelimit).replace(/"hour";r=(\d+);t=\d+/, '"hour";r=$1;t=…'),
      remaining: res.headers['x-ratelimit-remaining'],
    })
    const policy = '"hour";q=5;w=3600, "burst";q=2;w=1'

    expect(fields(await get('/api/v1/forms'))).toEqual({
      status: 200,
      policy,
      limit: '"hour";r=4;t=…',
      remaining: '4',
    })
    await get('/api/v1/forms')
    const burst = await get('/api/v1/forms')
    expect(fields(burst)).toEqual({
      status: 429,
      policy,
      limit: '"hour";r=3;t=…, "burst";r=0;t=1',
      remaining: '3',
    })
    expect(burst.json().message).toBe(
      'Rate limit exceeded: more than 2 requests in one second for this API key; please try again later',
    )

    now = start + 1000
    await get('/api/v1/forms')
    await get('/api/v1/forms')
    now = start + 2000
    expect((await get('/api/v1/forms')).statusCode).toBe(200)
    now = start + 3000
    const hourly = await get('/api/v1/forms')
    expect(hourly.statusCode).toBe(429)
    expect(hourly.json().message).toBe(
      'Rate limit exceeded: this API key has made its 5 requests for this hour; please try again later',
    )
    expect(hourly.headers.ratelimit).toBe(`"hour";r=0;t=${hourly.headers['retry-after']}`)
    expect(Number(hourly.headers['retry-after'])).toBe(3600 - 3)
  })
})
