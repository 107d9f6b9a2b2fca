import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  createRedirectMatcher,
  decodeRequestPath,
  encodeRedirectPath,
  type RedirectAnswer,
  type RedirectRule,
} from '../../src/services/redirects/matcher.js'
import { caseFile, casesFor, splitTarget } from './support.js'

// Mutation testing runs each test once per mutant it reaches: the scale tests, which guard running
// time and stack depth rather than answers, are left to the ordinary suite.
const atScale = it.skipIf(process.env.STRYKER_MUTATOR_WORKER !== undefined)

// Pure code, no database: runs once, in the SQLite project.
const pure = describe.skipIf(process.env.LECTERN_TEST_DATABASE === 'postgres')

pure('the core redirect matcher on spec/redirect-cases.json', () => {
  const matcher = createRedirectMatcher(caseFile.redirects)
  it.each(casesFor('core').map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(matcher.match(c.target)).toEqual(c.expect)
  })
})

pure('the core redirect matcher', () => {
  const rule = (fromPath: string, toPath: string, type = 'permanent', isActive = true): RedirectRule => ({
    fromPath,
    toPath,
    type,
    isActive,
  })

  it('treats a redirect that leads into a loop as no redirect instead of hanging', () => {
    const matcher = createRedirectMatcher([
      rule('/a', '/b'),
      rule('/b', '/c'),
      rule('/c', '/b'),
      rule('/x', '/a'),
    ])
    expect(matcher.match('/a')).toBeNull()
    expect(matcher.match('/b')).toBeNull()
    expect(matcher.match('/x')).toBeNull()
    expect(matcher.size).toBe(0)
  })

  it('treats a redirect to itself as no redirect', () => {
    expect(createRedirectMatcher([rule('/a', '/a')]).match('/a')).toBeNull()
  })

  atScale('follows a chain of 100,000 links to its end without exhausting the stack', () => {
    const links = Array.from({ length: 100_000 }, (_, i) =>
      rule(`/p${i}`, `/p${i + 1}`, i === 500 ? 'temporary' : 'permanent'),
    )
    const matcher = createRedirectMatcher(links)
    expect(matcher.match('/p0')).toEqual({ status: 302, location: '/p100000' })
    expect(matcher.match('/p501?x')).toEqual({ status: 301, location: '/p100000?x' })
    expect(matcher.size).toBe(100_000)
  })

  it('keeps the first of two active redirects with the same fromPath', () => {
    const matcher = createRedirectMatcher([rule('/a', '/first'), rule('/a', '/second')])
    expect(matcher.match('/a')).toEqual({ status: 301, location: '/first' })
  })

  it('lets an inactive redirect take no part, even when listed first with the same fromPath', () => {
    const matcher = createRedirectMatcher([rule('/a', '/off', 'permanent', false), rule('/a', '/on')])
    expect(matcher.match('/a')).toEqual({ status: 301, location: '/on' })
  })

  it('treats a rule without isActive as active, so that lists of active rules need not say so', () => {
    expect(createRedirectMatcher([{ fromPath: '/a', toPath: '/b', type: 'temporary' }]).match('/a')).toEqual({
      status: 302,
      location: '/b',
    })
  })

  it('refuses to redirect off-site when stored data holds a protocol-relative or non-path destination', () => {
    const matcher = createRedirectMatcher([
      rule('/a', '//evil.example'),
      rule('/b', 'https://evil.example/'),
      rule('/c', 'evil'),
    ])
    expect(matcher.match('/a')).toBeNull()
    expect(matcher.match('/b')).toBeNull()
    expect(matcher.match('/c')).toBeNull()
  })

  it('encodes a backslash in a destination, so a browser cannot read it as a slash', () => {
    expect(createRedirectMatcher([rule('/a', '/\\evil.example')]).match('/a')).toEqual({
      status: 301,
      location: '/%5Cevil.example',
    })
  })

  it('encodes a lone surrogate in a destination as U+FFFD instead of throwing', () => {
    expect(encodeRedirectPath('/a\uD800b')).toBe('/a%EF%BF%BDb')
  })

  it('lists every applying redirect, resolved, in the order given', () => {
    const matcher = createRedirectMatcher([
      rule('/b', '/c', 'temporary'),
      rule('/a', '/b'),
      rule('/off', '/x', 'permanent', false),
    ])
    expect([...matcher.rules()]).toEqual([
      { fromPath: '/b', toPath: '/c', status: 302, location: '/c' },
      { fromPath: '/a', toPath: '/c', status: 302, location: '/c' },
    ])
    expect(matcher.resolve('/a')?.toPath).toBe('/c')
    expect(matcher.resolve('/off')).toBeUndefined()
  })

  it('decodes a request path once and refuses invalid encodings', () => {
    expect(decodeRequestPath('/%C3%BCber')).toBe('/über')
    expect(decodeRequestPath('/%2541')).toBe('/%41')
    expect(decodeRequestPath('/%E0%80%AF')).toBeNull()
    expect(decodeRequestPath('/%ED%A0%80')).toBeNull()
    expect(decodeRequestPath('/%4')).toBeNull()
  })
})

/** A small alphabet, so that random sets are full of chains, loops and near-misses. */
const pathArbitrary = fc
  .array(fc.constantFrom('a', 'b', 'ü', '%', ' ', '/', ':', '.', '😀'), { minLength: 0, maxLength: 4 })
  .map((chars) => `/${chars.join('')}`)
const ruleArbitrary = fc.record({
  fromPath: pathArbitrary,
  toPath: fc.oneof(
    { weight: 5, arbitrary: pathArbitrary },
    {
      weight: 1,
      arbitrary: fc.constantFrom('//evil.example', 'https://evil.example', 'javascript:alert(1)', 'x:y', ''),
    },
  ),
  type: fc.constantFrom('permanent', 'temporary'),
  isActive: fc.boolean(),
})
const targetArbitrary = fc.tuple(
  fc.oneof(
    pathArbitrary,
    pathArbitrary.map(encodeRedirectPath),
    fc.string({ unit: 'grapheme', maxLength: 6 }),
  ),
  fc.option(fc.constantFrom('', 'a=1', 'q=a%20b&x=%C3%BC', 'a?b'), { nil: undefined }),
)

/** The redirect algorithm written as plainly as possible: walk the chain, one step at a time. */
function naiveMatch(rules: RedirectRule[], target: string): RedirectAnswer | null {
  const { path, query } = splitTarget(target)
  if (path === null) return null
  const find = (from: string) => rules.find((r) => r.isActive !== false && r.fromPath === from)
  let current = find(path)
  if (!current) return null
  let permanent = true
  const visited = new Set<string>()
  let destination = path
  while (current) {
    if (visited.has(current.fromPath)) return null
    visited.add(current.fromPath)
    permanent &&= current.type === 'permanent'
    destination = current.toPath
    current = find(destination)
  }
  if (!destination.startsWith('/') || destination.startsWith('//')) return null
  let location = ''
  for (const byte of Buffer.from(destination, 'utf8')) {
    const char = String.fromCharCode(byte)
    location += /[A-Za-z0-9\-._~/]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return { status: permanent ? 301 : 302, location: query === '' ? location : `${location}?${query}` }
}

pure('the core redirect matcher, on random redirect sets', () => {
  it('never redirects a path that no active redirect names', () => {
    fc.assert(
      fc.property(fc.array(ruleArbitrary, { maxLength: 12 }), targetArbitrary, (rules, [path, query]) => {
        const target = query === undefined ? path : `${path}?${query}`
        if (createRedirectMatcher(rules).match(target) === null) return
        const decoded = decodeRequestPath(path)
        expect(rules.some((r) => r.isActive && r.fromPath === decoded)).toBe(true)
      }),
      { numRuns: 500 },
    )
  })

  it('never answers with a Location that starts with // or a scheme', () => {
    fc.assert(
      fc.property(fc.array(ruleArbitrary, { maxLength: 12 }), targetArbitrary, (rules, [path, query]) => {
        const answer = createRedirectMatcher(rules).match(query === undefined ? path : `${path}?${query}`)
        if (answer === null) return
        expect(answer.location.startsWith('/')).toBe(true)
        expect(answer.location.startsWith('//')).toBe(false)
        expect(answer.location).not.toMatch(/^[A-Za-z][A-Za-z0-9+.-]*:/)
      }),
      { numRuns: 500 },
    )
  })

  it('agrees with a naive step-by-step reference', () => {
    fc.assert(
      fc.property(
        fc.array(ruleArbitrary, { maxLength: 12 }),
        fc.array(targetArbitrary, { maxLength: 8 }),
        (rules, targets) => {
          const matcher = createRedirectMatcher(rules)
          // Every fromPath is requested as well, so that matches are common, not lucky.
          const requests = [
            ...targets.map(([p, q]) => (q === undefined ? p : `${p}?${q}`)),
            ...rules.map((r) => encodeRedirectPath(r.fromPath)),
          ]
          for (const target of requests)
            expect(matcher.match(target), target).toEqual(naiveMatch(rules, target))
        },
      ),
      { numRuns: 500 },
    )
  })
})

pure('encodeRedirectPath', () => {
  it('encodes every character that is not unreserved or a slash, in uppercase hex', () => {
    expect(encodeRedirectPath('/neu-ü')).toBe('/neu-%C3%BC')
    expect(encodeRedirectPath("ü!'()*")).toBe('%C3%BC%21%27%28%29%2A')
    expect(encodeRedirectPath('/a b/100%')).toBe('/a%20b/100%25')
    expect(encodeRedirectPath('/A-z_0.9~/')).toBe('/A-z_0.9~/')
  })

  it('encodes a lone surrogate as U+FFFD, and a pair as its one character', () => {
    expect(encodeRedirectPath('/\uD800x')).toBe('/%EF%BF%BDx')
    expect(encodeRedirectPath('/x\uDC00')).toBe('/x%EF%BF%BD')
    expect(encodeRedirectPath('/\uD83D\uDE00\uD800')).toBe('/%F0%9F%98%80%EF%BF%BD')
    expect(encodeRedirectPath('/\uDC00\uD83D\uDE00')).toBe('/%EF%BF%BD%F0%9F%98%80')
  })
})

pure('the core redirect matcher, what it counts and lists', () => {
  const rule = (fromPath: string, toPath: string): RedirectRule => ({ fromPath, toPath, type: 'permanent' })

  it('counts and lists only the redirects that apply, not those in or into a loop', () => {
    const matcher = createRedirectMatcher([
      rule('/l', '/m'),
      rule('/a', '/b'),
      rule('/m', '/l'),
      rule('/into', '/l'),
      rule('/b', '/c'),
    ])
    expect(matcher.size).toBe(2)
    expect([...matcher.rules()].map((r) => [r.fromPath, r.toPath])).toEqual([
      ['/a', '/c'],
      ['/b', '/c'],
    ])
  })
})
