import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Kysely } from 'kysely'
import { buildApp } from '../../src/app.js'
import type { Database } from '../../src/db/tables.js'
import { newId, randomBase62 } from '../../src/ids.js'
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js'
import { createServices } from '../../src/services/index.js'
import { hashPassword } from '../../src/services/passwords.js'
import type { Role } from '../../src/services/roles.js'
import type { SessionOptions } from '../../src/services/sessions.js'
import { now } from '../../src/time.js'
import type { TestContext } from '../harness.js'

/** The password of every user made by `buildDashboardUser`. */
export const PASSWORD = 'correct horse battery staple'

/**
 * A user who can sign in with `PASSWORD`, written straight into the database. The password is hashed
 * at the cost the process hashes at now (test/password-cost.ts) unless `passwordHash` is given.
 */
export async function buildDashboardUser(
  db: Kysely<Database>,
  input: { role?: Role; email?: string; disabled?: boolean; passwordHash?: string } = {},
) {
  const passwordHash = input.passwordHash ?? hashPassword(PASSWORD)
  const timestamp = now()
  const row = {
    id: newId('user'),
    email: input.email ?? `person-${randomBase62(8).toLowerCase()}@example.com`,
    password_hash: await passwordHash,
    role: input.role ?? 'global_admin',
    is_disabled: input.disabled ? (1 as const) : (0 as const),
    created_at: timestamp,
    updated_at: timestamp,
  }
  await db.insertInto('users').values(row).execute()
  return row
}

/**
 * The whole app over the context's database, with dashboard sessions set by `sessions` (a clock
 * the test moves, shorter timeouts, lower sign-in limits).
 */
export async function buildAppWithSessions(
  ctx: TestContext,
  sessions: SessionOptions,
): Promise<FastifyInstance> {
  return buildApp({
    config: { ERROR_STYLE: 'code', LOG_LEVEL: 'silent' },
    services: createServices(ctx.database, { sessions }),
    limiter: new MemoryRateLimiter({ perHour: 1_000_000, perSecond: 1_000_000 }),
    database: ctx.database,
  })
}

/** A clock tests move by hand. */
export function manualClock(start = Date.parse('2024-06-01T12:00:00Z')) {
  let current = start
  return {
    now: () => current,
    advance(ms: number) {
      current += ms
    },
  }
}

const CSRF_INPUT = /name="_csrf" value="([^"]*)"/

/**
 * A browser in miniature over `inject()`: it keeps the cookies the dashboard sets (honouring their
 * path), sends them back, and remembers the CSRF token of the last page it read, so that tests read
 * like a person using the dashboard.
 */
export class DashboardClient {
  readonly cookies = new Map<string, { value: string; path: string }>()
  /** The CSRF token of the last page that had a form. */
  csrf = ''

  constructor(
    readonly app: FastifyInstance,
    readonly options: {
      /** Headers sent with every request. */
      headers?: Record<string, string>
      /** The client's IP address, as the server sees it. */
      remoteAddress?: string
    } = {},
  ) {}

  private cookieHeader(url: string): string | undefined {
    const path = url.split('?')[0] ?? url
    const sent = [...this.cookies].filter(
      ([, cookie]) => path === cookie.path || path.startsWith(`${cookie.path}/`),
    )
    return sent.length === 0 ? undefined : sent.map(([name, cookie]) => `${name}=${cookie.value}`).join('; ')
  }

  async request(options: InjectOptions & { url: string }): Promise<LightMyRequestResponse> {
    const cookie = this.cookieHeader(options.url)
    const res = await this.app.inject({
      ...options,
      ...(this.options.remoteAddress ? { remoteAddress: this.options.remoteAddress } : {}),
      headers: { ...this.options.headers, ...(cookie ? { cookie } : {}), ...(options.headers ?? {}) },
    })
    for (const set of res.cookies as { name: string; value: string; path?: string; expires?: Date }[]) {
      if (set.value === '' || (set.expires && set.expires.getTime() < Date.now()))
        this.cookies.delete(set.name)
      else this.cookies.set(set.name, { value: set.value, path: set.path ?? '/' })
    }
    const token = CSRF_INPUT.exec(res.body)?.[1]
    if (token) this.csrf = token
    return res
  }

  get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.request({ method: 'GET', url, headers })
  }

  /** Posts a form; the CSRF token of the last page read is added unless `fields` has its own `_csrf`. */
  post(url: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const body = new URLSearchParams({ _csrf: this.csrf, ...fields }).toString()
    return this.request({
      method: 'POST',
      url,
      payload: body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    })
  }

  /** Posts a `multipart/form-data` form, as a file upload does; the CSRF token is added as in `post`. */
  async postMultipart(
    url: string,
    fields: Record<string, string>,
    files: Record<string, { name: string; content: string }>,
  ) {
    const form = new FormData()
    form.set('_csrf', this.csrf)
    for (const [name, value] of Object.entries(fields)) form.set(name, value)
    for (const [name, file] of Object.entries(files))
      form.set(name, new Blob([file.content], { type: 'text/csv' }), file.name)
    // Let the platform encode the form, boundary and all.
    const encoded = new Request('http://localhost/', { method: 'POST', body: form })
    return this.request({
      method: 'POST',
      url,
      payload: Buffer.from(await encoded.arrayBuffer()),
      headers: { 'content-type': encoded.headers.get('content-type') as string },
    })
  }

  /** Signs in through the sign-in form; returns the answer to the form. */
  async signIn(email: string, password = PASSWORD): Promise<LightMyRequestResponse> {
    await this.get('/admin/login')
    return this.post('/admin/login', { email, password })
  }

  /** The value of the session cookie, if the client holds one. */
  get sessionToken(): string | undefined {
    return this.cookies.get('lectern_session')?.value
  }
}

/** Signs a new client in as a new user of `role`; fails the test if that does not work. */
export async function signedInClient(
  app: FastifyInstance,
  db: Kysely<Database>,
  role: Role = 'global_admin',
) {
  return signedInAs(app, await buildDashboardUser(db, { role }))
}

/** Signs a new client in as `user` (whose password is `PASSWORD`); fails the test if that does not work. */
export async function signedInAs<User extends { email: string }>(app: FastifyInstance, user: User) {
  const client = new DashboardClient(app)
  const res = await client.signIn(user.email)
  if (res.statusCode !== 303) throw new Error(`sign-in failed with ${res.statusCode}: ${res.body}`)
  await client.get('/admin')
  return { client, user }
}

/** The text of a page without its markup, whitespace collapsed, for `toContain` checks. */
export function textOf(res: Pick<LightMyRequestResponse, 'body'>): string {
  return res.body
    .replace(/<script[\s\S]*?<\/script>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
}

/** The text of the table row (or card) with HTML id `id`. */
export function rowText(res: LightMyRequestResponse, id: string): string {
  const start = res.body.indexOf(`id="${id}"`)
  if (start === -1) throw new Error(`no element with id ${id}`)
  const rest = res.body.slice(start)
  const end = rest.search(/<\/tr>|<\/article>/)
  return textOf({ body: `<${rest.slice(0, end)}` })
}
