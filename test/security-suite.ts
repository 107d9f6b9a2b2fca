import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomBase62 } from '../src/ids.js'
import { buildApiKey, buildUser } from './factories.js'
import { createTestContext, type TestContext } from './harness.js'

/**
 * The API's access contract written out by hand, so that a change to the code's own tables (roles,
 * error phrases) cannot silently change what the tests expect.
 */
export type SpecPermission = 'forms:read' | 'submissions:read' | 'pages:read' | 'redirects:read'
export type SpecRole = 'global_admin' | 'editor' | 'viewer'
export type ErrorStyle = 'code' | 'phrase'

export const SPEC_ROLE_PERMISSIONS: Record<SpecRole, readonly SpecPermission[]> = {
  global_admin: ['forms:read', 'submissions:read', 'pages:read', 'redirects:read'],
  editor: ['forms:read', 'pages:read', 'redirects:read'],
  viewer: ['pages:read', 'redirects:read'],
}

const ALL_PERMISSIONS: readonly SpecPermission[] = SPEC_ROLE_PERMISSIONS.global_admin

/** Every scope a key can carry: null (no narrowing) and each non-empty set of permissions. */
export const EVERY_SCOPE: readonly (readonly SpecPermission[] | null)[] = [
  null,
  ...Array.from({ length: 2 ** ALL_PERMISSIONS.length - 1 }, (_, mask) =>
    ALL_PERMISSIONS.filter((_, bit) => ((mask + 1) >> bit) & 1),
  ),
]

/** Whether a key of `role` narrowed to `scopes` may use `permission`: both must allow it. */
export const scopeAllows = (
  role: SpecRole,
  scopes: readonly SpecPermission[] | null,
  permission: SpecPermission,
) => SPEC_ROLE_PERMISSIONS[role].includes(permission) && (scopes === null || scopes.includes(permission))

export const SPEC_PHRASES: Record<string, string> = {
  missing_authorization_header: 'Missing authorization header',
  invalid_authorization_format: 'Invalid authorization format',
  invalid_api_key: 'Invalid API key',
  api_key_inactive: 'API key inactive',
  insufficient_permissions: 'Insufficient permissions',
  resource_not_found: 'Resource not found',
  invalid_parameters: 'Invalid parameters',
  rate_limit_exceeded: 'Rate limit exceeded',
  method_not_allowed: 'Method not allowed',
  internal_error: 'Internal server error',
  service_unavailable: 'Service unavailable',
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/

/** Limits high enough that tests about something else never meet a 429. */
export const GENEROUS_LIMITS = { perHour: 1_000_000, perSecond: 1_000_000 }

/** A well-formed key that no database holds. */
export const unknownKey = () => `lk_live_${randomBase62(40)}`

/** `inject()` a request, with `Authorization` set when given. */
export function request(
  app: FastifyInstance,
  url: string,
  authorization?: string,
  options: Omit<InjectOptions, 'url'> = {},
): Promise<LightMyRequestResponse> {
  const headers = { ...(options.headers ?? {}) }
  if (authorization !== undefined) headers.authorization = authorization
  return app.inject({ method: 'GET', ...options, url, headers })
}

/**
 * Asserts the SPEC error envelope: the status, JSON content type, a body with exactly `error` and
 * `message`, the `error` field in the configured style, and a request id. Returns the body.
 */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  type: string,
  style: ErrorStyle = 'code',
): { error: string; message: string } {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status })
  expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE)
  expect(res.headers['x-request-id']).toEqual(expect.any(String))
  const body = res.json() as { error: string; message: string }
  expect(Object.keys(body).sort()).toEqual(['error', 'message'])
  expect(body.error).toBe(style === 'phrase' ? SPEC_PHRASES[type] : type)
  expect(typeof body.message).toBe('string')
  expect(body.message.trim().length).toBeGreaterThan(0)
  return body
}

/** Asserts a 200 list envelope and returns it. */
export function expectList<Item = Record<string, unknown>>(
  res: LightMyRequestResponse,
): { data: Item[]; meta: { total: number; page: number; pageSize: number; totalPages: number } } {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 })
  expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE)
  const body = res.json()
  expect(Object.keys(body)).toEqual(['data', 'meta'])
  expect(Array.isArray(body.data)).toBe(true)
  expect(Object.keys(body.meta)).toEqual(['total', 'page', 'pageSize', 'totalPages'])
  return body
}

export interface SecuredEndpoint {
  /** The path to request, e.g. `/api/v1/forms`. */
  path: string
  /** The form the path names, for a submissions path: form-scoped keys are tried on it and on another. */
  formId?: string
  /** The permission the contract says the endpoint needs. */
  permission: SpecPermission
  /** Creates whatever the path needs to exist (e.g. the form of a submissions path). */
  prepare?: (ctx: TestContext) => Promise<void>
}

/**
 * The security suite of the authentication and roles contract, run against one endpoint: every way an `Authorization`
 * header can be missing, malformed, unknown, revoked or inactive, and every role's permission.
 */
export function describeSecuritySuite(endpoint: SecuredEndpoint, style: ErrorStyle = 'code'): void {
  const { path, permission } = endpoint

  describe(`security of GET ${path} (${style} errors)`, () => {
    let ctx: TestContext
    let app: FastifyInstance
    beforeAll(async () => {
      ctx = await createTestContext({ errorStyle: style, ...GENEROUS_LIMITS })
      app = ctx.app
      await endpoint.prepare?.(ctx)
    })
    afterAll(() => ctx.close())

    const expect401 = (res: LightMyRequestResponse, type: string, invalidToken: boolean) => {
      expectError(res, 401, type, style)
      const challenge = res.headers['www-authenticate']
      expect(challenge).toEqual(expect.stringMatching(/^Bearer\b/))
      if (invalidToken) expect(challenge).toContain('error="invalid_token"')
      else expect(challenge).not.toContain('error=')
    }

    it('refuses a request without an Authorization header with 401 missing_authorization_header', async () => {
      expect401(await request(app, path), 'missing_authorization_header', false)
    })

    it.each([
      ['empty', ''],
      ['spaces only', '   '],
      ['a tab', '\t'],
    ])(
      'refuses a blank Authorization header (%s) with 401 missing_authorization_header',
      async (_, value) => {
        expect401(await request(app, path, value), 'missing_authorization_header', false)
      },
    )

    it.each([
      ['another scheme (Basic)', () => 'Basic dXNlcjpwYXNzd29yZA=='],
      ['another scheme carrying a valid key', (key: string) => `Token ${key}`],
      ["'Bearer' with no token", () => 'Bearer'],
      ["'Bearer' followed by spaces only", () => 'Bearer    '],
      ['a valid key with no scheme', (key: string) => key],
      ['a valid key followed by an extra part', (key: string) => `Bearer ${key} extra`],
      ['two tokens', () => 'Bearer one two'],
      ['a colon after the scheme', (key: string) => `Bearer: ${key}`],
    ])('refuses %s with 401 invalid_authorization_format', async (_, header) => {
      const key = await buildApiKey(ctx.database.db)
      expect401(await request(app, path, header(key.plainKey)), 'invalid_authorization_format', false)
    })

    it.each(['bearer', 'BEARER', 'bEaReR'])('accepts the scheme word written %s', async (scheme) => {
      const key = await buildApiKey(ctx.database.db)
      expectList(await request(app, path, `${scheme} ${key.plainKey}`))
    })

    it('refuses a well-formed key that does not exist with 401 invalid_api_key', async () => {
      expect401(await request(app, path, `Bearer ${unknownKey()}`), 'invalid_api_key', true)
    })

    it('refuses a token that is not shaped like a key with 401 invalid_api_key', async () => {
      expect401(await request(app, path, 'Bearer not-a-real-key'), 'invalid_api_key', true)
    })

    it('refuses a key that differs from a real key in its last character', async () => {
      const { plainKey } = await buildApiKey(ctx.database.db)
      const last = plainKey.at(-1) === 'a' ? 'b' : 'a'
      expect401(await request(app, path, `Bearer ${plainKey.slice(0, -1)}${last}`), 'invalid_api_key', true)
    })

    it('refuses a revoked key with 401 invalid_api_key', async () => {
      const key = await buildApiKey(ctx.database.db, { revoked: true })
      expect401(await request(app, path, key.authorization), 'invalid_api_key', true)
    })

    it('refuses a deactivated key with 401 api_key_inactive', async () => {
      const key = await buildApiKey(ctx.database.db, { active: false })
      expect401(await request(app, path, key.authorization), 'api_key_inactive', true)
    })

    it('refuses the key of a disabled creator with 401 api_key_inactive', async () => {
      const user = await buildUser(ctx.database.db, { role: 'global_admin', disabled: true })
      const key = await buildApiKey(ctx.database.db, { userId: user.id })
      expect401(await request(app, path, key.authorization), 'api_key_inactive', true)
    })

    it('refuses the key of a creator deleted through the users service with 401 invalid_api_key', async () => {
      await buildUser(ctx.database.db, { role: 'global_admin' })
      const user = await buildUser(ctx.database.db, { role: 'global_admin' })
      const key = await buildApiKey(ctx.database.db, { userId: user.id })
      expectList(await request(app, path, key.authorization))
      await ctx.services.users.deleteUser(user.email)
      expect401(await request(app, path, key.authorization), 'invalid_api_key', true)
    })

    it('refuses the key of a creator deleted straight from the database with 401 invalid_api_key', async () => {
      const user = await buildUser(ctx.database.db, { role: 'global_admin' })
      const key = await buildApiKey(ctx.database.db, { userId: user.id })
      await sql`DELETE FROM users WHERE id = ${user.id}`.execute(ctx.database.db)
      expect401(await request(app, path, key.authorization), 'invalid_api_key', true)
    })

    it.each(Object.keys(SPEC_ROLE_PERMISSIONS) as SpecRole[])(
      `answers a key of a %s as the roles table says for '${permission}'`,
      async (role) => {
        const key = await buildApiKey(ctx.database.db, { role })
        const res = await request(app, path, key.authorization)
        if (SPEC_ROLE_PERMISSIONS[role].includes(permission)) {
          expectList(res)
        } else {
          expectError(res, 403, 'insufficient_permissions', style)
          expect(res.headers['www-authenticate']).toBeUndefined()
        }
      },
    )

    it(`answers every role × scope combination for '${permission}' with the intersection of both`, async () => {
      const outcomes: string[] = []
      const expected: string[] = []
      for (const role of Object.keys(SPEC_ROLE_PERMISSIONS) as SpecRole[]) {
        for (const scopes of EVERY_SCOPE) {
          const key = await buildApiKey(ctx.database.db, { role, scopes })
          const res = await request(app, path, key.authorization)
          const label = `${role} [${scopes?.join(',') ?? 'all'}]`
          const allowed = scopeAllows(role, scopes, permission)
          expected.push(`${label}: ${allowed ? 200 : 403}`)
          outcomes.push(`${label}: ${res.statusCode}`)
          if (allowed) expectList(res)
          else {
            const body = expectError(res, 403, 'insufficient_permissions', style)
            expect(body.message).toContain(permission)
          }
        }
      }
      expect(outcomes).toEqual(expected)
    })

    it('narrows a scoped key when its creator is demoted, on the next request', async () => {
      const user = await buildUser(ctx.database.db, { role: 'global_admin' })
      const key = await buildApiKey(ctx.database.db, { userId: user.id, scopes: [permission] })
      expectList(await request(app, path, key.authorization))
      await ctx.database.db.updateTable('users').set({ role: 'viewer' }).where('id', '=', user.id).execute()
      const res = await request(app, path, key.authorization)
      if (SPEC_ROLE_PERMISSIONS.viewer.includes(permission)) expectList(res)
      else expectError(res, 403, 'insufficient_permissions', style)
    })

    const formId = endpoint.formId
    if (formId !== undefined) {
      it('lets a form-scoped key read the submissions of its forms only, naming the form it may not read', async () => {
        for (const scopes of [null, ['submissions:read'] as const]) {
          const own = await buildApiKey(ctx.database.db, { scopes, forms: [formId, 'form_someOtherForm000'] })
          expectList(await request(app, path, own.authorization))
          const other = await buildApiKey(ctx.database.db, { scopes, forms: ['form_someOtherForm000'] })
          const body = expectError(
            await request(app, path, other.authorization),
            403,
            'insufficient_permissions',
            style,
          )
          expect(body.message).toContain('submissions:read')
          expect(body.message).toContain(formId)
        }
      })

      it('never lets a form-scoped key of an editor read submissions', async () => {
        const key = await buildApiKey(ctx.database.db, { role: 'editor', forms: [formId] })
        expectError(await request(app, path, key.authorization), 403, 'insufficient_permissions', style)
      })
    }

    it('checks the key before the query parameters', async () => {
      expect401(await request(app, `${path}?pageSize=0&page=-1`), 'missing_authorization_header', false)
      expect401(await request(app, `${path}?pageSize=0`, `Bearer ${unknownKey()}`), 'invalid_api_key', true)
    })

    // Every role reads pages and redirects: there, no role lacks the permission and the check is moot.
    const lacking = (Object.keys(SPEC_ROLE_PERMISSIONS) as SpecRole[]).find(
      (role) => !SPEC_ROLE_PERMISSIONS[role].includes(permission),
    )
    if (lacking !== undefined)
      it(`checks the permission before the query parameters (a ${lacking} key)`, async () => {
        const key = await buildApiKey(ctx.database.db, { role: lacking })
        expectError(
          await request(app, `${path}?pageSize=0`, key.authorization),
          403,
          'insufficient_permissions',
          style,
        )
      })

    it('answers HEAD without a key with 401, the challenge and an empty body', async () => {
      const res = await request(app, path, undefined, { method: 'HEAD' })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toEqual(expect.stringMatching(/^Bearer\b/))
      expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE)
      expect(res.body).toBe('')
    })
  })
}
