import { connect } from 'node:net'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildDashboardUser, PASSWORD } from '../admin/support.js'
import { buildApiKey } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import { HttpBrowser as Browser } from './http-browser.js'

/** Sends raw bytes and waits for the server to close the connection. */
function raw(port: number, payload: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(payload))
    socket.on('error', () => {})
    socket.on('data', () => {})
    socket.on('close', () => resolve())
  })
}

describe('logs at trace level, through every surface', () => {
  let ctx: TestContext
  const lines: string[] = []
  let base: string
  let port: number

  beforeAll(async () => {
    const stream = new PassThrough()
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)))
    ctx = await createTestContext({ logLevel: 'trace', logStream: stream })
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    port = (ctx.app.server.address() as { port: number }).port
    base = `http://127.0.0.1:${port}`
  })
  afterAll(() => ctx.close())

  it('never contain an API key, a session cookie, a password or a CSRF token', async () => {
    const key = await buildApiKey(ctx.database.db)
    const user = await buildDashboardUser(ctx.database.db)
    const secrets: Record<string, string> = { 'API key': key.plainKey, password: PASSWORD }

    // The API: a key in the header, in the query string under every secret-looking name, a bad key,
    // an unknown path, a refused method with a body.
    const api = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, init)
    expect((await api('/api/v1/forms', { headers: { authorization: key.authorization } })).status).toBe(200)
    for (const name of ['api_key', 'API_KEY', 'key', 'token', 'Access_Token', 'password'])
      await api(`/api/v1/forms?page=1&${name}=${encodeURIComponent(key.plainKey)}`)
    await api(`/api/v1/forms?${encodeURIComponent('api_key')}=${key.plainKey}#x`)
    expect(
      (await api('/api/v1/forms', { headers: { authorization: `Bearer ${key.plainKey}x` } })).status,
    ).toBe(401)
    expect(
      (await api(`/api/v1/nowhere?token=${key.plainKey}`, { headers: { authorization: key.authorization } }))
        .status,
    ).toBe(404)
    expect(
      (await api(`/nowhere?api_key=${key.plainKey}`, { headers: { cookie: `x=${key.plainKey}` } })).status,
    ).toBe(404)
    await api('/api/v1/forms', {
      method: 'POST',
      headers: {
        authorization: key.authorization,
        'x-api-key': key.plainKey,
        'content-type': 'application/json',
      },
      body: '{"broken json',
    })

    // The dashboard: sign in, a CSV upload (multipart), a parser error, sign out.
    const browser = new Browser(base)
    await browser.request('/admin/login')
    secrets['sign-in form token'] = browser.csrf
    const signedIn = await browser.post('/admin/login', { email: user.email, password: PASSWORD })
    expect(signedIn.status).toBe(303)
    const session = browser.cookies.get('lectern_session')
    expect(session).toBeDefined()
    secrets['session cookie'] = session as string
    await browser.request('/admin/redirects/import')
    secrets['CSRF token'] = browser.csrf
    const form = new FormData()
    form.set('_csrf', browser.csrf)
    form.set(
      'file',
      new Blob(['fromPath,toPath,type,isActive\n/old,/new,permanent,true\n'], { type: 'text/csv' }),
      'r.csv',
    )
    const uploaded = await browser.request('/admin/redirects/import', { method: 'POST', body: form })
    expect(uploaded.status).toBe(303)
    await browser.request('/admin/redirects/import', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=nothing', 'x-csrf-token': browser.csrf },
      body: 'not multipart at all',
    })
    await browser.request(`/admin/nowhere?token=${browser.csrf}`)
    expect((await browser.post('/admin/logout', {})).status).toBe(303)
    // A wrong password and an error page after signing out.
    await browser.request('/admin/login')
    await browser.post('/admin/login', { email: user.email, password: `${PASSWORD}-wrong` })

    // Requests the HTTP parser rejects.
    await raw(port, `GET /api/v1/forms?api_key=${key.plainKey} HTTP/9.9\r\nHost: x\r\n\r\n`)
    await raw(port, `GET /api/v1/forms HTTP/1.1\r\nAuthorization: Bearer ${key.plainKey}\r\n\r\n`)

    await new Promise((resolve) => setTimeout(resolve, 100))
    const all = lines.join('\n')
    for (const [what, secret] of Object.entries(secrets)) {
      expect(secret.length, what).toBeGreaterThan(10)
      const line = lines.find((l) => l.includes(secret) || l.includes(encodeURIComponent(secret)))
      expect(line, `the ${what} appears in a log line`).toBeUndefined()
    }
    // The run did log at trace level, including the multipart plugin's options and request URLs.
    expect(all).toContain('busboy')
    expect(all).toContain('[redacted]')
    expect(all).toMatch(/"url":"\/api\/v1\/forms\?page=1&api_key=\[redacted\]"/)
  })
})
