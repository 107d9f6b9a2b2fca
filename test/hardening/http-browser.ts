import type { FastifyInstance } from 'fastify'

/**
 * A browser in miniature over real HTTP: it keeps the cookies the server sets and the last page's
 * CSRF token, and can claim a client address through `X-Forwarded-For` (for an app built with
 * `TRUST_PROXY`, as behind a load balancer).
 */
export class HttpBrowser {
  readonly cookies = new Map<string, string>()
  csrf = ''

  constructor(
    private readonly base: string,
    readonly address?: string,
  ) {}

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    if (this.cookies.size > 0)
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '))
    if (this.address) headers.set('x-forwarded-for', this.address)
    const res = await fetch(`${this.base}${path}`, { ...init, headers, redirect: 'manual' })
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const name = pair.slice(0, pair.indexOf('='))
      const value = pair.slice(pair.indexOf('=') + 1)
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    const token = /name="_csrf" value="([^"]*)"/.exec(await res.clone().text())?.[1]
    if (token) this.csrf = token
    return res
  }

  /** Posts a form with the CSRF token of the last page read. */
  post(path: string, fields: Record<string, string>): Promise<Response> {
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: this.csrf, ...fields }).toString(),
    })
  }

  /** Opens the sign-in page and posts the form, as a person does. */
  async signIn(email: string, password: string): Promise<Response> {
    await this.request('/admin/login')
    return this.post('/admin/login', { email, password })
  }
}

/** Listens on a free local port and returns the base URL. */
export async function listenLocally(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
}

/** The text of an HTML page without its markup, whitespace collapsed. */
export function pageText(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
}
