import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  findRedirectChains,
  findRedirectLoops,
  flattenRedirectChains,
  MAX_REDIRECT_PATH_LENGTH,
  type RedirectEdge,
  redirectPathProblem,
} from './redirect-rules.js'

const edges = (...pairs: [string, string][]): RedirectEdge[] =>
  pairs.map(([fromPath, toPath]) => ({ fromPath, toPath }))

describe('redirectPathProblem', () => {
  it.each([
    '/',
    '/old',
    '/blog/2024/hello-world',
    '/a b',
    '/caf%C3%A9',
    '/café',
    `/${'x'.repeat(MAX_REDIRECT_PATH_LENGTH - 1)}`,
  ])('accepts %j', (path) => {
    expect(redirectPathProblem(path)).toBeNull()
  })

  it.each([
    ['', "must start with '/'"],
    ['old', "must start with '/'"],
    ['https://evil.com', "must start with '/'"],
    ['//evil.com', "must not start with '//'"],
    ['/a?b=1', "must not contain a query string ('?')"],
    ['/a#x', "must not contain a fragment ('#')"],
    ['/a\\b', 'must not contain a backslash'],
    ['/\\evil.com', 'must not contain a backslash'],
    ['/a\u0000b', 'must not contain control characters (found U+0000)'],
    ['/a\nLocation: x', 'must not contain control characters (found U+000A)'],
    ['/a\u001f', 'must not contain control characters (found U+001F)'],
    ['/a\u007f', 'must not contain control characters (found U+007F)'],
    [`/${'x'.repeat(MAX_REDIRECT_PATH_LENGTH)}`, 'must be at most 2048 characters long (it has 2049)'],
  ])('refuses %j because it %s', (path, reason) => {
    expect(redirectPathProblem(path)).toContain(reason)
  })
})

describe('findRedirectLoops', () => {
  it('finds no loop among redirects that all land somewhere', () => {
    expect(findRedirectLoops(edges(['/a', '/b'], ['/b', '/c'], ['/x', '/y']))).toEqual([])
  })

  it('reports A→B→A as the paths a client would visit', () => {
    expect(findRedirectLoops(edges(['/a', '/b'], ['/b', '/a']))).toEqual([['/a', '/b', '/a']])
  })

  it('treats a redirect to itself as a loop', () => {
    expect(findRedirectLoops(edges(['/a', '/a']))).toEqual([['/a', '/a']])
  })

  it('reports a loop once, without the redirects that lead into it', () => {
    const loops = findRedirectLoops(
      edges(['/x', '/a'], ['/a', '/b'], ['/b', '/c'], ['/c', '/a'], ['/y', '/b']),
    )
    expect(loops).toEqual([['/a', '/b', '/c', '/a']])
  })

  it('reports each of several separate loops', () => {
    const loops = findRedirectLoops(edges(['/a', '/b'], ['/b', '/a'], ['/c', '/c'], ['/d', '/e']))
    expect(loops).toEqual([
      ['/a', '/b', '/a'],
      ['/c', '/c'],
    ])
  })

  it('matches paths exactly and case-sensitively', () => {
    expect(findRedirectLoops(edges(['/a', '/A'], ['/A', '/a/']))).toEqual([])
  })
})

describe('findRedirectChains', () => {
  it('reports A→B, B→C as A chaining via B to C', () => {
    expect(findRedirectChains(edges(['/a', '/b'], ['/b', '/c']))).toEqual([
      { fromPath: '/a', via: ['/b'], finalPath: '/c' },
    ])
  })

  it('lists every hop of a long chain, and every redirect that starts one', () => {
    expect(findRedirectChains(edges(['/a', '/b'], ['/b', '/c'], ['/c', '/d']))).toEqual([
      { fromPath: '/a', via: ['/b', '/c'], finalPath: '/d' },
      { fromPath: '/b', via: ['/c'], finalPath: '/d' },
    ])
  })

  it('leaves out redirects that lead into a loop, which never land', () => {
    expect(findRedirectChains(edges(['/x', '/a'], ['/a', '/b'], ['/b', '/a'], ['/s', '/s']))).toEqual([])
    expect(findRedirectChains(edges(['/x', '/a'], ['/a', '/s'], ['/s', '/s']))).toEqual([])
  })

  it('finds nothing when no destination is itself redirected', () => {
    expect(findRedirectChains(edges(['/a', '/z'], ['/b', '/z']))).toEqual([])
  })
})

describe('flattenRedirectChains', () => {
  it('points every chained redirect at its final destination', () => {
    expect(flattenRedirectChains(edges(['/a', '/b'], ['/b', '/c'], ['/c', '/d'], ['/x', '/y']))).toEqual([
      { fromPath: '/a', toPath: '/d' },
      { fromPath: '/b', toPath: '/d' },
    ])
  })

  it('returns without hanging when the redirects hold a loop', () => {
    expect(flattenRedirectChains(edges(['/a', '/b'], ['/b', '/c'], ['/c', '/b'], ['/d', '/d']))).toEqual([])
  })

  const paths = fc.constantFrom('/a', '/b', '/c', '/d', '/e', '/f', '/g', '/h')
  const uniqueRedirects = fc.uniqueArray(fc.tuple(paths, paths), { selector: ([from]) => from, maxLength: 8 })

  it('leaves no chain and the same loops once its updates are applied, for any set of redirects', () => {
    fc.assert(
      fc.property(uniqueRedirects, (pairs) => {
        const redirects = edges(...pairs)
        const updates = new Map(flattenRedirectChains(redirects).map((u) => [u.fromPath, u.toPath]))
        const flattened = redirects.map((r) => ({ ...r, toPath: updates.get(r.fromPath) ?? r.toPath }))
        expect(findRedirectChains(flattened)).toEqual([])
        expect(findRedirectLoops(flattened)).toEqual(findRedirectLoops(redirects))
      }),
    )
  })

  it('agrees with a step-by-step walk about where every redirect lands, for any set of redirects', () => {
    fc.assert(
      fc.property(uniqueRedirects, (pairs) => {
        const next = new Map<string, string>(pairs)
        const chains = new Map(findRedirectChains(edges(...pairs)).map((c) => [c.fromPath, c]))
        for (const [from, to] of pairs) {
          const visited: string[] = [from]
          let current: string = to
          while (next.has(current) && !visited.includes(current)) {
            visited.push(current)
            current = next.get(current) as string
          }
          const lands = !next.has(current)
          const chained = lands && visited.length > 1
          expect(chains.has(from)).toBe(chained)
          if (chained)
            expect(chains.get(from)).toEqual({ fromPath: from, via: visited.slice(1), finalPath: current })
        }
      }),
    )
  })
})
