import type { Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/tables.js'
import { buildApiKey, buildForm, buildPage, buildRedirect, buildSubmission, buildUser } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import type { SpecRole } from '../security-suite.js'
import { type DashboardClient, PASSWORD, signedInClient, textOf } from './support.js'

const ALL: SpecRole[] = ['global_admin', 'editor', 'viewer']
const MANAGERS: SpecRole[] = ['global_admin', 'editor']
const ADMINS: SpecRole[] = ['global_admin']

/** A request and whatever it needs to exist, made fresh for each role so that no test depends on another. */
interface Case {
  method: 'GET' | 'POST'
  route: string
  allowed: SpecRole[]
  prepare(db: Kysely<Database>): Promise<{ url: string; fields?: Record<string, string> }>
}

const fixed = (url: string, fields?: Record<string, string>) => async () => ({ url, fields })
let unique = 0
const path = () => `/role-check-${++unique}`

/** The roles applied to the dashboard: who may open each page and use each action. */
const CASES: Case[] = [
  { method: 'GET', route: '/admin', allowed: ALL, prepare: fixed('/admin') },
  { method: 'GET', route: '/admin/forms', allowed: MANAGERS, prepare: fixed('/admin/forms') },
  {
    method: 'GET',
    route: '/admin/forms/:id/submissions',
    allowed: ADMINS,
    prepare: async (db) => ({ url: `/admin/forms/${(await buildForm(db)).id}/submissions` }),
  },
  { method: 'GET', route: '/admin/pages', allowed: ALL, prepare: fixed('/admin/pages') },
  { method: 'GET', route: '/admin/redirects', allowed: ALL, prepare: fixed('/admin/redirects') },
  {
    method: 'GET',
    route: '/admin/redirects/export.csv',
    allowed: ALL,
    prepare: fixed('/admin/redirects/export.csv'),
  },
  { method: 'GET', route: '/admin/redirects/new', allowed: MANAGERS, prepare: fixed('/admin/redirects/new') },
  {
    method: 'GET',
    route: '/admin/redirects/import',
    allowed: MANAGERS,
    prepare: fixed('/admin/redirects/import'),
  },
  {
    method: 'GET',
    route: '/admin/redirects/:id/edit',
    allowed: MANAGERS,
    prepare: async (db) => ({
      url: `/admin/redirects/${(await buildRedirect(db, { fromPath: path() })).id}/edit`,
    }),
  },
  {
    method: 'GET',
    route: '/admin/redirects/:id/delete',
    allowed: MANAGERS,
    prepare: async (db) => ({
      url: `/admin/redirects/${(await buildRedirect(db, { fromPath: path() })).id}/delete`,
    }),
  },
  { method: 'GET', route: '/admin/keys', allowed: ADMINS, prepare: fixed('/admin/keys') },
  { method: 'GET', route: '/admin/keys/new', allowed: ADMINS, prepare: fixed('/admin/keys/new') },
  {
    method: 'GET',
    route: '/admin/keys/:id/revoke',
    allowed: ADMINS,
    prepare: async (db) => ({ url: `/admin/keys/${(await buildApiKey(db)).id}/revoke` }),
  },
  { method: 'GET', route: '/admin/users', allowed: ADMINS, prepare: fixed('/admin/users') },
  { method: 'GET', route: '/admin/users/new', allowed: ADMINS, prepare: fixed('/admin/users/new') },
  {
    method: 'GET',
    route: '/admin/users/:id/delete',
    allowed: ADMINS,
    prepare: async (db) => ({ url: `/admin/users/${(await buildUser(db, { role: 'viewer' })).id}/delete` }),
  },
  { method: 'POST', route: '/admin/logout', allowed: ALL, prepare: fixed('/admin/logout') },
  {
    method: 'POST',
    route: '/admin/keys',
    allowed: ADMINS,
    prepare: fixed('/admin/keys', { name: 'role check' }),
  },
  ...(['deactivate', 'activate', 'revoke'] as const).map(
    (action): Case => ({
      method: 'POST',
      route: `/admin/keys/:id/${action}`,
      allowed: ADMINS,
      prepare: async (db) => ({
        url: `/admin/keys/${(await buildApiKey(db, { active: action !== 'activate' })).id}/${action}`,
      }),
    }),
  ),
  {
    method: 'POST',
    route: '/admin/users',
    allowed: ADMINS,
    prepare: async () => ({
      url: '/admin/users',
      fields: { email: `new${++unique}@example.com`, role: 'viewer', password: PASSWORD },
    }),
  },
  ...(['role', 'disable', 'enable', 'delete'] as const).map(
    (action): Case => ({
      method: 'POST',
      route: `/admin/users/:id/${action}`,
      allowed: ADMINS,
      prepare: async (db) => ({
        url: `/admin/users/${(await buildUser(db, { role: 'viewer', disabled: action === 'enable' })).id}/${action}`,
        fields: { role: 'editor' },
      }),
    }),
  ),
  {
    method: 'POST',
    route: '/admin/forms/:id/active',
    allowed: MANAGERS,
    prepare: async (db) => ({
      url: `/admin/forms/${(await buildForm(db)).id}/active`,
      fields: { active: 'false' },
    }),
  },
  ...(['read', 'star', 'notes'] as const).map(
    (action): Case => ({
      method: 'POST',
      route: `/admin/submissions/:id/${action}`,
      allowed: ADMINS,
      prepare: async (db) => {
        const submission = await buildSubmission(db, { formId: (await buildForm(db)).id })
        return {
          url: `/admin/submissions/${submission.id}/${action}`,
          fields: { read: 'true', starred: 'true', notes: 'n' },
        }
      },
    }),
  ),
  {
    method: 'POST',
    route: '/admin/pages/:id/published',
    allowed: MANAGERS,
    prepare: async (db) => ({
      url: `/admin/pages/${(await buildPage(db)).id}/published`,
      fields: { published: 'false' },
    }),
  },
  {
    method: 'POST',
    route: '/admin/redirects',
    allowed: MANAGERS,
    prepare: async () => ({
      url: '/admin/redirects',
      fields: { fromPath: path(), toPath: '/to', type: 'permanent' },
    }),
  },
  {
    method: 'POST',
    route: '/admin/redirects/:id',
    allowed: MANAGERS,
    prepare: async (db) => {
      const redirect = await buildRedirect(db, { fromPath: path() })
      return {
        url: `/admin/redirects/${redirect.id}`,
        fields: { fromPath: redirect.from_path, toPath: '/changed', type: 'temporary' },
      }
    },
  },
  ...(['active', 'delete'] as const).map(
    (action): Case => ({
      method: 'POST',
      route: `/admin/redirects/:id/${action}`,
      allowed: MANAGERS,
      prepare: async (db) => ({
        url: `/admin/redirects/${(await buildRedirect(db, { fromPath: path() })).id}/${action}`,
        fields: { active: 'false' },
      }),
    }),
  ),
  {
    method: 'POST',
    route: '/admin/redirects/flatten',
    allowed: MANAGERS,
    prepare: fixed('/admin/redirects/flatten'),
  },
  {
    method: 'POST',
    route: '/admin/redirects/import',
    allowed: MANAGERS,
    prepare: async () => ({
      url: '/admin/redirects/import',
      fields: { csv: `fromPath,toPath\n${path()},/to\n` },
    }),
  },
]

describe('who may use each dashboard page and action', () => {
  let ctx: TestContext
  const clients = new Map<SpecRole, DashboardClient>()
  beforeAll(async () => {
    ctx = await createTestContext()
    for (const role of ALL) clients.set(role, (await signedInClient(ctx.app, ctx.database.db, role)).client)
  })
  afterAll(() => ctx.close())

  const cases = CASES.flatMap((c) => ALL.map((role) => [c.method, c.route, role, c] as const))
  it.each(cases)('%s %s as %s', async (method, _route, role, c) => {
    // Signing out would end the session the other cases use: that one runs with a session of its own.
    const client =
      c.route === '/admin/logout'
        ? (await signedInClient(ctx.app, ctx.database.db, role)).client
        : (clients.get(role) as DashboardClient)
    const { url, fields } = await c.prepare(ctx.database.db)
    await client.get('/admin')
    const res = method === 'GET' ? await client.get(url) : await client.post(url, fields)
    if (c.allowed.includes(role)) {
      expect([200, 201, 303], textOf(res).slice(0, 500)).toContain(res.statusCode)
    } else {
      expect(res.statusCode).toBe(403)
      expect(textOf(res)).toContain('Your role does not give access to this page')
    }
  })

  it('shows each role only the sections it may open', async () => {
    const links = async (role: SpecRole) => {
      const body = (await (clients.get(role) as DashboardClient).get('/admin')).body
      return ['/admin/forms', '/admin/pages', '/admin/redirects', '/admin/keys', '/admin/users'].filter(
        (href) => body.includes(`href="${href}"`),
      )
    }
    expect(await links('global_admin')).toEqual([
      '/admin/forms',
      '/admin/pages',
      '/admin/redirects',
      '/admin/keys',
      '/admin/users',
    ])
    expect(await links('editor')).toEqual(['/admin/forms', '/admin/pages', '/admin/redirects'])
    expect(await links('viewer')).toEqual(['/admin/pages', '/admin/redirects'])
  })

  it('shows a viewer pages and redirects without any control that changes them', async () => {
    const viewer = clients.get('viewer') as DashboardClient
    await buildPage(ctx.database.db, { title: 'Read only page' })
    await buildRedirect(ctx.database.db, { fromPath: path(), toPath: '/somewhere' })
    for (const url of ['/admin/pages', '/admin/redirects']) {
      const res = await viewer.get(url)
      expect(res.statusCode).toBe(200)
      expect(res.body).not.toMatch(/<form[^>]*method="post"[^>]*action="\/admin\/(pages|redirects)/)
      expect(textOf(res)).not.toMatch(/New redirect|Import CSV|Unpublish|Deactivate/)
    }
  })

  it('shows an editor forms without submission counts or links to submissions', async () => {
    const form = await buildForm(ctx.database.db, { title: 'Editor visible form' })
    await buildSubmission(ctx.database.db, { formId: form.id })
    const res = await (clients.get('editor') as DashboardClient).get('/admin/forms')
    expect(textOf(res)).toContain('Editor visible form')
    expect(res.body).not.toContain('/submissions')
    expect(textOf(res)).not.toContain('Submissions')
  })
})
