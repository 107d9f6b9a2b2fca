import type { FastifyInstance, FastifyRequest } from 'fastify'
import { html, type SafeUrl, url } from '../html.js'

/** Which surfaces this instance serves, so that the front page links only to what is there. */
export interface HomeSurfaces {
  dashboard: boolean
  reference: boolean
}

interface HomeLink {
  name: string
  href: SafeUrl
  what: string
}

/** The addresses a person or a program opening the server's root is looking for. */
function homeLinks({ dashboard, reference }: HomeSurfaces): HomeLink[] {
  return [
    ...(dashboard
      ? [
          {
            name: 'admin',
            href: url`/admin`,
            what: 'the dashboard: sign in to manage content, users and keys',
          },
        ]
      : []),
    ...(reference ? [{ name: 'docs', href: url`/docs`, what: 'the API reference' }] : []),
    { name: 'openapi', href: url`/openapi.json`, what: 'the OpenAPI document' },
    {
      name: 'api',
      href: url`/api/v1/forms`,
      what: 'the API (needs an API key: Authorization: Bearer <API_KEY>)',
    },
  ]
}

/**
 * Whether the request's `Accept` asks for HTML (a browser's does), with a quality above zero. Only
 * HTML asked for by name counts: `*\/*` (curl, most HTTP libraries) gets JSON.
 */
export function prefersHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept
  if (accept === undefined) return false
  for (const range of accept.split(',')) {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase())
    if (type !== 'text/html') continue
    const quality = parameters.find((parameter) => parameter.startsWith('q='))
    return quality === undefined || Number(quality.slice(2)) > 0
  }
  return false
}

/**
 * `GET /`: where to go from here. A browser gets a small page of links, anything else the same
 * links as JSON. Both are built once: the answer depends on the instance's surfaces only, never on
 * a key or on content.
 */
export function registerHome(app: FastifyInstance, surfaces: HomeSurfaces): void {
  const links = homeLinks(surfaces)
  const json = JSON.stringify({
    name: 'Lectern',
    message: 'A read-only content API. Send an API key to the paths under /api/v1.',
    links: Object.fromEntries(links.map((link) => [link.name, link.href.toString()])),
  })
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lectern</title>
</head>
<body>
<main>
<h1>Lectern</h1>
<p>This server answers programs with an API key. You may be looking for:</p>
<ul>
${links.map((link) => html`<li><a href="${link.href}">${link.href.toString()}</a>: ${link.what}</li>\n`)}</ul>
</main>
</body>
</html>
`.toString()

  app.get('/', async (request, reply) => {
    reply.header('Vary', 'Accept')
    if (!prefersHtml(request)) return reply.type('application/json; charset=utf-8').send(json)
    return reply
      .type('text/html; charset=utf-8')
      .header('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'")
      .header('X-Content-Type-Options', 'nosniff')
      .send(page)
  })
}
