import { createHash } from 'node:crypto'
import scalar from '@scalar/fastify-api-reference'
import type { FastifyInstance } from 'fastify'

/** Where the API reference page lives. */
export const DOCS_PREFIX = '/docs'

const INLINE_SCRIPT = /<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g

/**
 * The page's Content-Security-Policy: everything from this server only, so the page works offline
 * and cannot call out. Its one inline script (the reference's configuration) is allowed by hash;
 * the reference injects its stylesheet at run time, hence inline styles.
 */
export function docsContentSecurityPolicy(html: string): string {
  const hashes = [...html.matchAll(INLINE_SCRIPT)].map(
    ([, script]) =>
      `'sha256-${createHash('sha256')
        .update(script ?? '')
        .digest('base64')}'`,
  )
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/**
 * The API reference at `/docs`, rendered in the browser by Scalar from `/openapi.json`. The
 * renderer's script is served by this process (`/docs/js/scalar.js`); nothing comes from a CDN,
 * and every feature that would call a third party (fonts, telemetry, the AI agent) is off.
 *
 * The page sets its own Content-Security-Policy, scoped to `/docs`, replacing any app-wide policy:
 * a policy strict enough for the dashboard would block the reference's inline configuration.
 */
export async function registerApiReference(app: FastifyInstance): Promise<void> {
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_request, reply, payload) => {
      const type = String(reply.getHeader('content-type') ?? '')
      const html = type.startsWith('text/html') && typeof payload === 'string' ? payload : ''
      reply.header('Content-Security-Policy', docsContentSecurityPolicy(html))
      return payload
    })
    await docs.register(scalar, {
      routePrefix: DOCS_PREFIX,
      logLevel: 'warn',
      configuration: {
        url: '/openapi.json',
        pageTitle: 'Lectern API reference',
        withDefaultFonts: false,
        telemetry: false,
        showDeveloperTools: 'never',
        agent: { disabled: true },
        defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
      },
    })
  })
}
