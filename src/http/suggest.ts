import type { FastifyInstance } from 'fastify'

/** A route as segments: a literal to match (ignoring case), or `null` for a parameter. */
type RoutePattern = (string | null)[]

/**
 * The path a request to an unknown path probably meant, from the routes registered on `app` after
 * this is called: the same path without its trailing slash (`/api/v1/forms/`), or with a route's
 * own letter case (`/api/v1/Forms`). Parameters (a form id) are kept as the request gave them.
 * Returns `undefined` when no route is that close.
 */
export function pathSuggester(app: FastifyInstance): (path: string) => string | undefined {
  const patterns: RoutePattern[] = []
  const seen = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (seen.has(route.url)) return
    seen.add(route.url)
    patterns.push(route.url.split('/').map((segment) => (segment.startsWith(':') ? null : segment)))
  })
  return (path) => {
    const trimmed = path.replace(/\/+$/, '')
    if (trimmed === '') return undefined
    const segments = trimmed.split('/')
    for (const pattern of patterns) {
      if (pattern.length !== segments.length) continue
      const suggestion: string[] = []
      for (const [index, literal] of pattern.entries()) {
        const given = segments[index] as string
        if (literal === null ? given === '' : literal.toLowerCase() !== given.toLowerCase()) break
        suggestion.push(literal ?? given)
      }
      if (suggestion.length !== pattern.length) continue
      const candidate = suggestion.join('/')
      if (candidate !== path) return candidate
    }
    return undefined
  }
}
