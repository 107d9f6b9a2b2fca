import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRedirectHandler,
  createRedirectLoader,
  createRedirectMatcher,
  createRedirectMiddleware,
  encodeRedirectPath,
  Lectern,
  RedirectLimitError,
  type RedirectMatch,
  type RedirectRule,
} from '../src/index.js'
import { REPOSITORY_ROOT } from './launcher.js'
import { listOf, startMisbehaving } from './support.js'

// spec/redirect-cases.json is the one table of redirect cases every runtime (the server, the CLI,
// the web-server exports and the three clients) answers the same way.
interface RedirectCase {
  name: string
  target: string
  expect: RedirectMatch | null
  skip?: Record<string, string>
}
const { redirects, cases: allCases } = JSON.parse(
  readFileSync(`${REPOSITORY_ROOT}spec/redirect-cases.json`, 'utf8'),
) as { redirects: RedirectRule[]; cases: RedirectCase[] }
const cases = allCases.filter((c) => c.skip?.js === undefined)

describe('the redirect matcher on the shared cases (spec/redirect-cases.json)', () => {
  const matcher = createRedirectMatcher(redirects)

  it('needs no case skipped for JavaScript', () => {
    expect(cases).toHaveLength(allCases.length)
  })

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    expect(matcher.match(c.target)).toEqual(c.expect)
  })
})

describe('the redirect matcher', () => {
  it('ignores inactive redirects and answers nothing when it has none', () => {
    const matcher = createRedirectMatcher([
      { fromPath: '/a', toPath: '/b', type: 'permanent', isActive: false },
    ])
    expect(matcher.size).toBe(0)
    expect(matcher.match('/a')).toBeNull()
  })

  it('never answers a Location that leaves the site, whatever the items say', () => {
    const matcher = createRedirectMatcher([
      { fromPath: '/a', toPath: '//evil.example/x', type: 'permanent' },
      { fromPath: '/b', toPath: 'https://evil.example/', type: 'temporary' },
      { fromPath: '/c', toPath: '/a', type: 'permanent' },
    ])
    for (const target of ['/a', '/b', '/c']) expect(matcher.match(target)).toBeNull()
  })

  it('answers nothing for a loop, without hanging', () => {
    const matcher = createRedirectMatcher([
      { fromPath: '/x', toPath: '/y', type: 'permanent' },
      { fromPath: '/y', toPath: '/x', type: 'permanent' },
      { fromPath: '/into-loop', toPath: '/x', type: 'permanent' },
    ])
    expect(matcher.match('/x')).toBeNull()
    expect(matcher.match('/into-loop')).toBeNull()
    expect(matcher.size).toBe(0)
  })

  it('flattens a long chain in one pass and keeps the first of two equal fromPaths', () => {
    const chain = Array.from({ length: 5000 }, (_, i) => ({
      fromPath: `/step-${i}`,
      toPath: `/step-${i + 1}`,
      type: 'permanent',
    }))
    const matcher = createRedirectMatcher([
      ...chain,
      { fromPath: '/step-0', toPath: '/elsewhere', type: 'temporary' },
    ])
    expect(matcher.match('/step-0')).toEqual({ status: 301, location: '/step-5000' })
    expect(matcher.match('/step-4999?q')).toEqual({ status: 301, location: '/step-5000?q' })
  })

  it('encodes a destination with a lone surrogate as U+FFFD rather than throwing', () => {
    expect(encodeRedirectPath('/a\uD800b')).toBe('/a%EF%BF%BDb')
  })
})

/** Sends `target` byte for byte on a raw request line (an HTTP client would normalize it). */
function rawGet(port: number, target: string): Promise<{ status: number; location: string | null }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let response = ''
    socket.on('data', (chunk) => {
      response += chunk.toString('latin1')
    })
    socket.on('error', reject)
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1])
      const location = /\r\nlocation: ([^\r]*)\r\n/i.exec(response)?.[1] ?? null
      resolve({ status, location })
    })
    socket.write(
      Buffer.from(`GET ${target} HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\n\r\n`, 'utf8'),
    )
  })
}

describe('the Node middleware over real HTTP', () => {
  let server: Server
  let port: number

  beforeAll(async () => {
    const redirect = createRedirectMiddleware(createRedirectMatcher(redirects))
    server = createServer((request, response) =>
      redirect(request, response, () => {
        response.statusCode = 200
        response.end('served')
      }),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  // A fragment never leaves a browser: the request line carries the target without it. Node's
  // HTTP parser refuses raw non-ASCII bytes in a request line (400) before any middleware runs, so
  // those cases go through the middleware without the wire below.
  const ascii = cases.filter((c) => /^[\x21-\x7e]*$/.test(c.target))
  it.each(ascii.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const { status, location } = await rawGet(port, c.target.split('#')[0] as string)
    if (c.expect === null) expect({ status, location }).toEqual({ status: 200, location: null })
    else expect({ status, location }).toEqual({ status: c.expect.status, location: c.expect.location })
  })

  it.each(cases.map((c) => [c.name, c] as const))(
    'answers as the table says when called directly: %s',
    (_, c) => {
      const redirect = createRedirectMiddleware(createRedirectMatcher(redirects))
      const headers = new Map<string, string | number>()
      const response = {
        statusCode: 200,
        setHeader: (name: string, value: string | number) => headers.set(name, value),
        end: () => undefined,
      }
      let passedOn = false
      redirect({ url: c.target }, response, () => {
        passedOn = true
      })
      if (c.expect === null)
        expect({ passedOn, location: headers.get('Location') }).toEqual({
          passedOn: true,
          location: undefined,
        })
      else
        expect({ passedOn, status: response.statusCode, location: headers.get('Location') }).toEqual({
          passedOn: false,
          ...c.expect,
        })
    },
  )

  it('prefers Express’s originalUrl, so a mounted middleware sees the whole path', () => {
    const redirect = createRedirectMiddleware(createRedirectMatcher(redirects))
    const headers = new Map<string, string | number>()
    const response = {
      statusCode: 200,
      setHeader: (name: string, value: string | number) => headers.set(name, value),
      end: () => undefined,
    }
    let passedOn = false
    redirect({ url: '/', originalUrl: '/old?x=1' }, response, () => {
      passedOn = true
    })
    expect(passedOn).toBe(false)
    expect(response.statusCode).toBe(301)
    expect(headers.get('Location')).toBe('/new?x=1')
  })

  it('reads a proxy-style absolute target by its path', async () => {
    expect(await rawGet(port, 'http://example.test/old?a=1')).toEqual({ status: 301, location: '/new?a=1' })
  })

  it('hands a failing source’s error to next instead of throwing', () => {
    const failure = new Error('no matcher')
    const redirect = createRedirectMiddleware({
      match: () => {
        throw failure
      },
    })
    let received: unknown
    redirect(
      { url: '/old' },
      { statusCode: 200, setHeader: () => undefined, end: () => undefined },
      (error) => {
        received = error
      },
    )
    expect(received).toBe(failure)
  })
})

describe('the fetch-style handler', () => {
  const handle = createRedirectHandler(createRedirectMatcher(redirects))

  // A Request's URL is parsed by the runtime; the cases whose target survives parsing unchanged
  // must answer exactly as the table says.
  const preserved = cases.filter((c) => {
    const url = new URL(`http://example.test${c.target}`)
    return `${url.pathname}${url.search}${url.hash}` === c.target
  })

  it('runs most of the shared cases', () => {
    expect(preserved.length).toBeGreaterThan(cases.length / 2)
  })

  it.each(preserved.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const response = handle(new Request(`http://example.test${c.target}`))
    if (c.expect === null) expect(response).toBeNull()
    else {
      expect(response?.status).toBe(c.expect.status)
      expect(response?.headers.get('location')).toBe(c.expect.location)
    }
  })

  it('matches a raw non-ASCII path, which the runtime percent-encodes', () => {
    const response = handle(new Request('http://example.test/über?x=1#top'))
    expect(response?.status).toBe(301)
    expect(response?.headers.get('location')).toBe('/neu-%C3%BC?x=1')
  })

  it('answers null for a path that does not redirect, and for any method alike', () => {
    expect(handle(new Request('http://example.test/nothing-here'))).toBeNull()
    expect(handle(new Request('http://example.test/old', { method: 'HEAD' }))?.status).toBe(301)
  })
})

describe('the redirect loader', () => {
  const redirect = (n: number) => ({
    id: `redirect_${n}`,
    fromPath: `/from-${n}`,
    toPath: `/to-${n}`,
    type: 'permanent',
    isActive: true,
    createdAt: '2024-01-01T10:00:00Z',
    updatedAt: '2024-01-01T10:00:00Z',
  })

  it('refuses to hold more than maxRedirects, and keeps the redirects it had', async () => {
    let total = 200
    const server = await startMisbehaving(listOf(redirect, () => total))
    try {
      const lectern = new Lectern({ baseUrl: server.baseUrl, apiKey: 'lk_live_x' })
      const loader = await createRedirectLoader(lectern, { refreshInterval: 0, maxRedirects: 250 })
      expect(loader.match('/from-199')).toEqual({ status: 301, location: '/to-199' })
      total = 300
      const error = await loader.refresh().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(RedirectLimitError)
      expect(error).toMatchObject({ type: 'too_many_redirects', maxRedirects: 250 })
      expect((error as Error).message).toContain('more than 250 active redirects')
      expect(loader.lastError).toBe(error)
      expect(loader.match('/from-199')).toEqual({ status: 301, location: '/to-199' })
      await expect(
        createRedirectLoader(lectern, { refreshInterval: 0, maxRedirects: 250 }),
      ).rejects.toBeInstanceOf(RedirectLimitError)
    } finally {
      await server.close()
    }
  })

  it('loads a list whose pages announce ever more only up to its first total', async () => {
    const server = await startMisbehaving(listOf(redirect))
    try {
      const lectern = new Lectern({ baseUrl: server.baseUrl, apiKey: 'lk_live_x' })
      const loader = await createRedirectLoader(lectern, { refreshInterval: 0, maxRedirects: 10_000 })
      expect(loader.matcher.size).toBe(200)
      expect(loader.match('/from-199')).toEqual({ status: 301, location: '/to-199' })
      expect(loader.match('/from-200')).toBeNull()
      expect(server.requests).toHaveLength(2)
    } finally {
      await server.close()
    }
  })
})
