import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { StringTable } from '../../string-table.js'
import { createRedirectMatcher, type RedirectRule } from './matcher.js'
import {
  describeLoop,
  describeRedirectRoute,
  findRedirectChains,
  findRedirectLoops,
  flatteningYielding,
  flattenRedirectChains,
  flattenTypedRedirectChains,
  type RedirectEdge,
  RedirectGraph,
  resolveYielding,
  rotateLoop,
} from './rules.js'

// Mutation testing runs each test once per mutant it reaches: the scale tests, which guard running
// time and stack depth rather than answers, are left to the ordinary suite.
const atScale = it.skipIf(process.env.STRYKER_MUTATOR_WORKER !== undefined)

const edges = (...pairs: [string, string][]): RedirectEdge[] =>
  pairs.map(([fromPath, toPath]) => ({ fromPath, toPath }))

describe('describing routes and loops', () => {
  it('names every path of a short route', () => {
    expect(describeRedirectRoute(['/a', '/b'], 3, '/c')).toBe('/a → /b → /c')
  })

  it('shortens a long route in the middle, with how many paths it leaves out', () => {
    const head = ['/m0', '/m1', '/m2', '/m3', '/m4', '/m5']
    expect(describeRedirectRoute(head, 100_001, '/m100000')).toBe(
      '/m0 → /m1 → /m2 → /m3 → /m4 → /m5 → … 99,994 more … → /m100000',
    )
  })

  it('tells a loop from any of its paths', () => {
    expect(rotateLoop(['/a', '/b', '/c', '/a'], '/b')).toEqual(['/b', '/c', '/a', '/b'])
    expect(describeLoop(['/a', '/b', '/c', '/a'], '/c')).toBe('/c → /a → /b → /c')
    expect(describeLoop(['/s', '/s'], '/s')).toBe('/s → /s')
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

describe('flattenTypedRedirectChains', () => {
  const paths = fc.constantFrom('/a', '/b', '/c', '/d', '/e', '/f')
  const types = fc.constantFrom('permanent' as const, 'temporary' as const)
  const typedRedirects = fc.uniqueArray(fc.tuple(paths, paths, types), {
    selector: ([from]) => from,
    maxLength: 8,
  })
  const answers = (redirects: readonly RedirectRule[]) =>
    ['/a', '/b', '/c', '/d', '/e', '/f'].map((path) => createRedirectMatcher(redirects).match(path))

  it('keeps a chain through a temporary redirect temporary', async () => {
    const updates = await flattenTypedRedirectChains([
      { fromPath: '/chain-a', toPath: '/chain-b', type: 'permanent' },
      { fromPath: '/chain-b', toPath: '/chain-c', type: 'temporary' },
    ])
    expect(updates).toEqual([
      {
        fromPath: '/chain-a',
        toPath: '/chain-c',
        type: 'temporary',
        before: { toPath: '/chain-b', type: 'permanent' },
      },
    ])
  })

  it('gives every path the answer it had before, for any set of typed redirects', async () => {
    await fc.assert(
      fc.asyncProperty(typedRedirects, async (triples) => {
        const redirects = triples.map(([fromPath, toPath, type]) => ({ fromPath, toPath, type }))
        const updates = new Map((await flattenTypedRedirectChains(redirects)).map((u) => [u.fromPath, u]))
        const flattened = redirects.map((r) => {
          const update = updates.get(r.fromPath)
          return update ? { ...r, toPath: update.toPath, type: update.type } : r
        })
        expect(answers(flattened)).toEqual(answers(redirects))
        for (const r of redirects) {
          const update = updates.get(r.fromPath)
          if (update) expect(update.before).toEqual({ toPath: r.toPath, type: r.type })
        }
      }),
    )
  })
})

describe('RedirectGraph on long chains', () => {
  const LINKS = 200_000
  const longChain = () =>
    Array.from({ length: LINKS }, (_, i): RedirectEdge => ({ fromPath: `/m${i}`, toPath: `/m${i + 1}` }))

  atScale('analyses a 200,000-link chain without walking it once per link', () => {
    const graph = RedirectGraph.of(longChain())
    expect(graph.loops()).toEqual([])
    expect(graph.chainCount()).toBe(LINKS - 1)
    expect(graph.chainFrom('/m0')).toEqual({
      fromPath: '/m0',
      hops: LINKS,
      head: ['/m0', '/m1', '/m2', '/m3', '/m4', '/m5'],
      finalPath: `/m${LINKS}`,
    })
    expect(graph.chainFrom(`/m${LINKS - 2}`)?.hops).toBe(2)
    expect(graph.chainFrom(`/m${LINKS - 1}`)).toBeUndefined()
    const chains = findRedirectChains(longChain())
    expect(chains).toHaveLength(LINKS - 1)
    expect(chains[LINKS - 2]).toEqual({
      fromPath: `/m${LINKS - 2}`,
      via: [`/m${LINKS - 1}`],
      finalPath: `/m${LINKS}`,
    })
  })

  atScale('flattens a 200,000-link chain to one hop each', () => {
    const updates = flattenRedirectChains(longChain())
    expect(updates).toHaveLength(LINKS - 1)
    expect(new Set(updates.map((update) => update.toPath))).toEqual(new Set([`/m${LINKS}`]))
  })

  atScale('finds a 200,000-link loop once, whichever redirect is added first', () => {
    const loop = longChain()
    loop.push({ fromPath: `/m${LINKS}`, toPath: '/m0' })
    loop.reverse()
    const found = findRedirectLoops(loop)
    expect(found).toHaveLength(1)
    expect(found[0]).toHaveLength(LINKS + 2)
    expect(found[0]?.[0]).toBe(`/m${LINKS}`)
    expect(findRedirectChains(loop)).toEqual([])
  })

  atScale('resolves step by step, letting other work run in between', async () => {
    const graph = new RedirectGraph()
    for (const { fromPath, toPath } of longChain()) graph.add(fromPath, toPath)
    let ranBetween = 0
    const ticker = setInterval(() => ranBetween++, 0)
    await resolveYielding(graph)
    clearInterval(ticker)
    expect(graph.chainCount()).toBe(LINKS - 1)
    expect(ranBetween).toBeGreaterThan(0)
  })

  it('finds, for every redirect, the first marked path along its route', () => {
    const graph = RedirectGraph.of(
      edges(['/a', '/b'], ['/b', '/c'], ['/c', '/d'], ['/x', '/y'], ['/l', '/m'], ['/m', '/l']),
    )
    const first = graph.firstMarkedOnRoute((path) => path === '/b' || path === '/c')
    expect(['/a', '/b', '/c', '/x', '/l'].map(first)).toEqual(['/b', '/b', '/c', undefined, undefined])
  })

  it('refuses to answer before it is resolved', () => {
    const graph = new RedirectGraph()
    graph.add('/a', '/b')
    expect(() => graph.loops()).toThrow(/resolve/)
  })
})

describe('RedirectGraph in detail', () => {
  const chainOf = (links: number, prefix = '/c') =>
    Array.from(
      { length: links },
      (_, i): RedirectEdge => ({ fromPath: `${prefix}${i}`, toPath: `${prefix}${i + 1}` }),
    )

  it('counts its redirects and knows which paths are redirected', () => {
    const paths = new StringTable()
    const graph = new RedirectGraph(paths)
    graph.add('/a', '/b')
    graph.add('/b', '/c')
    paths.intern('/late')
    expect(graph.size).toBe(2)
    expect(graph.redirects('/a')).toBe(true)
    expect(graph.redirects('/c')).toBe(false)
    expect(graph.redirects('/never')).toBe(false)
    expect(graph.redirects('/late')).toBe(false)
  })

  it('keeps the first redirect of a path, and says so', () => {
    const paths = new StringTable()
    const graph = new RedirectGraph(paths)
    const [a, b, x] = ['/a', '/b', '/x'].map((p) => paths.intern(p)) as [number, number, number]
    expect(graph.addNodes(a, b)).toBe(true)
    expect(graph.addNodes(a, x)).toBe(false)
    expect(graph.size).toBe(1)
    expect(
      findRedirectChains(edges(['/a', '/b'], ['/b', '/c'], ['/a', '/x'])).map((c) => c.fromPath),
    ).toEqual(['/a'])
  })

  it('holds more redirects than its first allocation', () => {
    const graph = RedirectGraph.of(chainOf(1500))
    expect(graph.size).toBe(1500)
    expect(graph.chainCount()).toBe(1499)
    expect(graph.chainFrom('/c1498')).toEqual({
      fromPath: '/c1498',
      hops: 2,
      head: ['/c1498', '/c1499'],
      finalPath: '/c1500',
    })
  })

  it('summarises a chain with its first six paths, and a short one with all of its redirected paths', () => {
    const graph = RedirectGraph.of([...chainOf(8), ...edges(['/x', '/y'])])
    expect(graph.chainFrom('/c0')).toEqual({
      fromPath: '/c0',
      hops: 8,
      head: ['/c0', '/c1', '/c2', '/c3', '/c4', '/c5'],
      finalPath: '/c8',
    })
    expect(graph.chainFrom('/c5')).toEqual({
      fromPath: '/c5',
      hops: 3,
      head: ['/c5', '/c6', '/c7'],
      finalPath: '/c8',
    })
    expect(graph.chainFrom('/c7')).toBeUndefined()
    expect(graph.chainFrom('/x')).toBeUndefined()
    expect(graph.chainFrom('/nowhere')).toBeUndefined()
    const start = graph.paths.find('/c6')
    expect(graph.chainAt(start)).toEqual({ fromPath: '/c6', hops: 2, head: ['/c6', '/c7'], finalPath: '/c8' })
  })

  it('counts chains, not redirects in or into a loop', () => {
    const graph = RedirectGraph.of(
      edges(['/a', '/b'], ['/b', '/c'], ['/l', '/m'], ['/m', '/l'], ['/i', '/l']),
    )
    expect(graph.chainCount()).toBe(1)
    expect(graph.loops()).toEqual([['/l', '/m', '/l']])
  })

  it('refuses to be read before it is resolved', () => {
    const graph = new RedirectGraph()
    graph.add('/a', '/b')
    expect(() => graph.chainCount()).toThrow('RedirectGraph: resolve() before reading the analysis')
    expect(() => graph.loops()).toThrow('RedirectGraph: resolve() before reading the analysis')
  })

  it('lists no via for a path that is not redirected, and walks a loop once round', () => {
    const graph = RedirectGraph.of(edges(['/l', '/m'], ['/m', '/l'], ['/a', '/b']))
    expect(graph.via('/b')).toEqual([])
    expect(graph.via('/unknown')).toEqual([])
    // Four paths in the graph: the walk stops once it has listed more than that.
    expect(graph.via('/l')).toEqual(['/m', '/l', '/m', '/l', '/m'])
  })

  it('finds no marked path on the route of a path it does not know, or met after resolving', () => {
    const graph = RedirectGraph.of(edges(['/a', '/b']))
    const first = graph.firstMarkedOnRoute(() => true)
    graph.paths.intern('/late')
    expect(first('/a')).toBe('/a')
    expect(first('/unknown')).toBeUndefined()
    expect(first('/late')).toBeUndefined()
  })

  it('gives a redirect in a loop no marked path unless it is marked itself', () => {
    const graph = RedirectGraph.of(edges(['/l', '/m'], ['/m', '/l'], ['/i', '/m']))
    const first = graph.firstMarkedOnRoute((path) => path === '/m')
    expect(['/l', '/m', '/i'].map(first)).toEqual([undefined, '/m', undefined])
  })

  it('pauses once every 20,000 steps of resolving, two steps per redirect of a chain', () => {
    const graph = new RedirectGraph()
    for (const { fromPath, toPath } of chainOf(25_000)) graph.add(fromPath, toPath)
    expect([...graph.resolving()].length).toBe(2)
    expect(graph.chainCount()).toBe(24_999)
    expect([...graph.resolving()].length).toBe(0)
  })

  it('resolves a small graph step by step too', async () => {
    const graph = new RedirectGraph()
    graph.add('/a', '/b')
    graph.add('/b', '/c')
    expect((await resolveYielding(graph)).chainCount()).toBe(1)
  })

  it('flattens step by step, letting other work run every 2,000 updates', async () => {
    const graph = RedirectGraph.of(chainOf(4001))
    let ranBetween = 0
    let running = true
    const tick = () => {
      if (!running) return
      ranBetween++
      setImmediate(tick)
    }
    setImmediate(tick)
    const updates = await flatteningYielding(graph, () => false)
    running = false
    expect(updates.map(({ fromPath, toPath }) => ({ fromPath, toPath }))).toEqual(graph.flattening())
    expect(ranBetween).toBeGreaterThan(0)
  })
})

describe('describeRedirectRoute at its limits', () => {
  const route = (n: number) => Array.from({ length: n }, (_, i) => `/p${i}`)

  it('shows a route of seven paths in full, and shortens one of eight', () => {
    expect(describeRedirectRoute(route(6), 7, '/p6')).toBe('/p0 → /p1 → /p2 → /p3 → /p4 → /p5 → /p6')
    expect(describeRedirectRoute(route(8), 8, '/p7')).toBe(
      '/p0 → /p1 → /p2 → /p3 → /p4 → /p5 → … 1 more … → /p7',
    )
  })

  it('shortens a long loop too', () => {
    const loop = [...route(10), '/p0']
    expect(describeLoop(loop, '/p0')).toBe('/p0 → /p1 → /p2 → /p3 → /p4 → /p5 → … 4 more … → /p0')
  })
})
