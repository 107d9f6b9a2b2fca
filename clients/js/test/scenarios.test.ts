import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AuthenticationError,
  createRedirectLoader,
  InvalidRequestError,
  Lectern,
  type LecternError,
  type List,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  ServiceUnavailableError,
} from '../src/index.js'
import { REPOSITORY_ROOT, startTestServer, type TestServer } from './launcher.js'

// Runs spec/client-scenarios.json, the language-neutral scenarios every official client runs,
// against the shared test server (scripts/client-test-server.mjs).

interface Expectation {
  ids?: string[]
  meta?: Record<string, number>
  items?: Record<string, unknown>[]
  item?: Record<string, unknown>
  error?: { kind: ErrorKind; type: string; status: number; messageContains?: string }
  lastStatus?: number
  rateLimit?: { limit?: number; remainingBelow?: number }
  until?: string
}
interface Step {
  call: string
  args?: {
    formId?: string
    page?: number
    pageSize?: number
    active?: boolean
    published?: boolean
    since?: string
    until?: string
    isRead?: boolean
    isStarred?: boolean
    data?: Record<string, unknown>
    milliseconds?: number
  }
  save?: string
  times?: number
  expect?: Expectation
  expectLast?: Expectation
}
interface Scenario {
  name: string
  key: string
  client?: { maxRetries?: number }
  steps: Step[]
}

type ErrorKind =
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'invalid_request'
  | 'rate_limit'
  | 'unavailable'
  | 'server'

/** The contract's error kinds, as this client's classes. */
const ERROR_CLASS: Record<ErrorKind, abstract new (...args: never[]) => LecternError> = {
  authentication: AuthenticationError,
  permission: PermissionError,
  not_found: NotFoundError,
  invalid_request: InvalidRequestError,
  rate_limit: RateLimitError,
  unavailable: ServiceUnavailableError,
  server: ServerError,
}

const { scenarios } = JSON.parse(readFileSync(`${REPOSITORY_ROOT}spec/client-scenarios.json`, 'utf8')) as {
  scenarios: Scenario[]
}

interface Outcome {
  items: { id: string }[]
  meta?: Record<string, number>
  /** What a `get` returned. */
  item?: object
  /** What a `sync` returned as the next run's `since`. */
  until?: string
  /** What a step may `save` for later ones. */
  saved?: string
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

async function page(list: Promise<List<{ id: string }>>): Promise<Outcome> {
  const { data, meta } = await list
  return { items: data, meta: { ...meta } }
}

/** `$name` in an argument or an expected id stands for what an earlier step saved as `name`. */
function resolve<T>(value: T, saved: Map<string, string>): T {
  if (typeof value === 'string' && value.startsWith('$')) {
    const name = value.slice(1)
    if (!saved.has(name)) throw new Error(`Nothing saved as ${name} before it is used`)
    return saved.get(name) as T
  }
  if (Array.isArray(value)) return value.map((one) => resolve(one, saved)) as T
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, one]) => [key, resolve(one, saved)])) as T
  return value
}

/** Posts a submission the way a site's form does (no key), as `intake.submit` asks. */
async function submit(formId: string, data: Record<string, unknown>): Promise<Outcome> {
  const response = await fetch(`${server.baseUrl}/f/${encodeURIComponent(formId)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(data),
  })
  const body = (await response.json()) as { id: string }
  expect(response.status, `intake.submit: ${JSON.stringify(body)}`).toBe(201)
  return { items: [], saved: body.id }
}

/** Makes the step's call with its canonical arguments. */
async function call(lectern: Lectern, step: Step): Promise<Outcome> {
  const { formId = '', data = {}, milliseconds = 0, ...params } = step.args ?? {}
  switch (step.call) {
    case 'submissions.sync': {
      const { items, until } = await lectern.submissions.sync(formId, params)
      return { items, until, saved: until }
    }
    case 'intake.submit':
      return submit(formId, data)
    case 'clock.wait':
      await new Promise((done) => setTimeout(done, milliseconds))
      return { items: [] }
    case 'forms.list':
      return page(lectern.forms.list(params))
    case 'forms.all':
      return { items: await collect(lectern.forms.all(params)) }
    case 'forms.get': {
      const item = await lectern.forms.get(formId)
      return { items: [item], item }
    }
    case 'forms.submissions':
      return page(lectern.forms.submissions(formId, params))
    case 'forms.allSubmissions':
      return { items: await collect(lectern.forms.allSubmissions(formId, params)) }
    case 'pages.list':
      return page(lectern.pages.list(params))
    case 'pages.all':
      return { items: await collect(lectern.pages.all(params)) }
    case 'redirects.list':
      return page(lectern.redirects.list(params))
    case 'redirects.all':
      return { items: await collect(lectern.redirects.all(params)) }
    default:
      throw new Error(`Unknown call in the scenarios: ${step.call}`)
  }
}

/** `{baseUrl}` in an expected value stands for the test server's address. */
function withBaseUrl(value: unknown, baseUrl: string): unknown {
  if (typeof value === 'string') return value.replaceAll('{baseUrl}', baseUrl)
  if (Array.isArray(value)) return value.map((one) => withBaseUrl(one, baseUrl))
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, one]) => [key, withBaseUrl(one, baseUrl)]))
  return value
}

function checkOutcome(
  lectern: Lectern,
  outcome: Outcome | LecternError,
  expected: Expectation,
  where: string,
  saved: Map<string, string>,
) {
  if (expected.error) {
    const { kind, type, status, messageContains } = expected.error
    expect(outcome, where).toBeInstanceOf(ERROR_CLASS[kind])
    expect(outcome, where).toMatchObject({ type, status })
    if (messageContains !== undefined)
      expect((outcome as LecternError).message, where).toContain(messageContains)
  } else {
    if (outcome instanceof Error) throw outcome
    const { items, meta } = outcome
    if (expected.ids)
      expect(
        items.map((item) => item.id),
        where,
      ).toEqual(resolve(expected.ids, saved))
    if (expected.until !== undefined) expect(outcome.until, where).toBe(expected.until)
    if (expected.meta) expect(meta, where).toStrictEqual(expected.meta)
    if (expected.item) {
      const item = withBaseUrl(expected.item, server.baseUrl)
      expect(outcome.item, where).toStrictEqual(item)
      expect(JSON.stringify(outcome.item), `${where}: fields in the API's order`).toBe(JSON.stringify(item))
    }
    if (expected.items) {
      expect(items, where).toStrictEqual(expected.items)
      // Fields come in the API's order, too.
      expect(
        items.map((item) => Object.keys(item)),
        where,
      ).toEqual(expected.items.map((item) => Object.keys(item)))
    }
  }
  if (expected.lastStatus !== undefined) expect(lectern.lastResponse?.status, where).toBe(expected.lastStatus)
  if (expected.rateLimit) {
    const state = lectern.lastResponse?.rateLimit
    expect(state, where).not.toBeNull()
    if (expected.rateLimit.limit !== undefined) expect(state?.limit, where).toBe(expected.rateLimit.limit)
    if (expected.rateLimit.remainingBelow !== undefined)
      expect(state?.remaining, where).toBeLessThan(expected.rateLimit.remainingBelow)
  }
}

let server: TestServer

describe('the shared client scenarios (spec/client-scenarios.json)', () => {
  beforeAll(async () => {
    server = await startTestServer()
  }, 60_000)
  afterAll(() => server?.stop())

  it('covers every kind of call and error the contract names', () => {
    const calls = new Set(scenarios.flatMap((scenario) => scenario.steps.map((step) => step.call)))
    expect([...calls].sort()).toEqual(
      [
        'forms.all',
        'forms.allSubmissions',
        'forms.get',
        'forms.list',
        'forms.submissions',
        'intake.submit',
        'clock.wait',
        'submissions.sync',
        'pages.all',
        'pages.list',
        'redirects.all',
        'redirects.list',
      ].sort(),
    )
  })

  it.each(scenarios.map((scenario) => [scenario.name, scenario] as const))('%s', async (_, scenario) => {
    const apiKey = server.keys[scenario.key]
    expect(apiKey, `launcher key ${scenario.key}`).toBeDefined()
    const lectern = new Lectern({ baseUrl: server.baseUrl, apiKey: apiKey as string, ...scenario.client })
    const saved = new Map<string, string>()
    for (const [index, rawStep] of scenario.steps.entries()) {
      const step = { ...rawStep, args: resolve(rawStep.args, saved) }
      const times = step.times ?? 1
      for (let run = 1; run <= times; run++) {
        const where = `step ${index + 1} (${step.call}), run ${run} of ${times}`
        const outcome = await call(lectern, step).catch((error: LecternError) => error)
        const last = run === times
        if (step.expect) checkOutcome(lectern, outcome, step.expect, where, saved)
        else if (step.expectLast && last) checkOutcome(lectern, outcome, step.expectLast, where, saved)
        else if (outcome instanceof Error) throw outcome
        if (step.save && !(outcome instanceof Error) && outcome.saved !== undefined)
          saved.set(step.save, outcome.saved)
      }
    }
  })

  describe('the redirect loader', () => {
    it('builds a matcher from the active redirects and revalidates them with conditional requests', async () => {
      const lectern = new Lectern({ baseUrl: server.baseUrl, apiKey: server.keys.viewer as string })
      const loader = await createRedirectLoader(lectern, { refreshInterval: 0 })
      try {
        expect(lectern.lastResponse?.status).toBe(200)
        expect(loader.matcher.size).toBe(5)
        expect(loader.match('/chain-a?from=loader')).toEqual({
          status: 301,
          location: '/chain-c?from=loader',
        })
        expect(loader.match('/%C3%BCber')).toEqual({ status: 302, location: '/neu-%C3%BC' })
        expect(loader.match('/promo#top')).toEqual({ status: 302, location: '/pricing' })
        expect(loader.match('/retired')).toBeNull()
        const before = loader.loadedAt
        const matcher = await loader.refresh()
        expect(lectern.lastResponse?.status).toBe(304)
        expect(matcher.size).toBe(5)
        expect(loader.loadedAt.getTime()).toBeGreaterThanOrEqual(before.getTime())
        expect(loader.lastError).toBeNull()
      } finally {
        loader.close()
      }
    })

    it('refuses to start when the first load fails', async () => {
      const lectern = new Lectern({ baseUrl: server.baseUrl, apiKey: server.keys.revoked as string })
      await expect(createRedirectLoader(lectern)).rejects.toBeInstanceOf(AuthenticationError)
    })

    it('keeps the redirects it has when a refresh fails, and reports the error', async () => {
      let apiKey = server.keys.editor as string
      const lectern = new Lectern({
        baseUrl: server.baseUrl,
        apiKey: 'placeholder',
        // The key changes under the client, as if it were revoked between two refreshes.
        fetch: (url, init) =>
          fetch(url, {
            ...init,
            headers: { ...(init.headers as object), Authorization: `Bearer ${apiKey}` },
          }),
      })
      const loader = await createRedirectLoader(lectern, { refreshInterval: 0 })
      try {
        apiKey = server.keys.unknown as string
        await expect(loader.refresh()).rejects.toBeInstanceOf(AuthenticationError)
        expect(loader.lastError).toBeInstanceOf(AuthenticationError)
        expect(loader.match('/blog-old')).toEqual({ status: 301, location: '/blog' })
      } finally {
        loader.close()
      }
    })
  })
})
