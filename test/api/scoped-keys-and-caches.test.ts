import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApiKey, buildForm, buildPage, buildRedirect, buildSubmission } from '../factories.js'
import { createTestContext, type TestContext } from '../harness.js'
import {
  EVERY_SCOPE,
  expectError,
  expectList,
  GENEROUS_LIMITS,
  request,
  type SpecPermission,
} from '../security-suite.js'

const FORM = 'form_cachedScopes0000000'
const OTHER_FORM = 'form_cachedScopesOther00'

const PATHS: [string, SpecPermission][] = [
  ['/api/v1/forms', 'forms:read'],
  [`/api/v1/forms/${FORM}/submissions`, 'submissions:read'],
  [`/api/v1/forms/${OTHER_FORM}/submissions`, 'submissions:read'],
  ['/api/v1/page-builder', 'pages:read'],
  ['/api/v1/page-builder/redirects', 'redirects:read'],
]

/**
 * A response cached for one key is never served to a key with a narrower scope: the permission is
 * decided before the list handler and its cache run. Each pair of scopes is tried on every path,
 * the first key warming the cache (twice: an entry is kept from its second miss on).
 */
describe('scoped keys and the response cache', () => {
  let ctx: TestContext
  const keys = new Map<string, string>()
  const label = (scopes: readonly string[] | null, forms: readonly string[] | null) =>
    `[${scopes?.join(',') ?? 'all'}]${forms ? ` forms ${forms.join(',')}` : ''}`
  const variants: { scopes: readonly SpecPermission[] | null; forms: readonly string[] | null }[] = [
    ...EVERY_SCOPE.map((scopes) => ({ scopes, forms: null })),
    { scopes: null, forms: [FORM] },
    { scopes: ['submissions:read'], forms: [FORM] },
    { scopes: ['submissions:read'], forms: [OTHER_FORM] },
  ]
  const allows = (variant: (typeof variants)[number], permission: SpecPermission, path: string): boolean =>
    (variant.scopes === null || variant.scopes.includes(permission)) &&
    (permission !== 'submissions:read' ||
      variant.forms === null ||
      variant.forms.some((form) => path.includes(`/forms/${form}/`)))

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    const db = ctx.database.db
    await buildForm(db, { id: FORM })
    await buildForm(db, { id: OTHER_FORM })
    await buildSubmission(db, { formId: FORM })
    await buildSubmission(db, { formId: OTHER_FORM })
    await buildPage(db)
    await buildRedirect(db)
    for (const variant of variants) {
      const key = await buildApiKey(db, variant)
      keys.set(label(variant.scopes, variant.forms), key.authorization)
    }
  })
  afterAll(() => ctx.close())

  it.each(PATHS)(
    'answers each key on %s by its own scope after any other key warmed the cache, whatever If-None-Match says',
    async (path, permission) => {
      const outcomes: string[] = []
      const expected: string[] = []
      for (const warm of variants) {
        if (!allows(warm, permission, path)) continue
        const warmAuth = keys.get(label(warm.scopes, warm.forms)) as string
        expectList(await request(ctx.app, path, warmAuth))
        const warmed = await request(ctx.app, path, warmAuth)
        const body = expectList(warmed)
        const tag = warmed.headers.etag as string
        for (const asking of variants) {
          const auth = keys.get(label(asking.scopes, asking.forms)) as string
          const name = `warmed by ${label(warm.scopes, warm.forms)}, asked by ${label(asking.scopes, asking.forms)}`
          const allowed = allows(asking, permission, path)
          expected.push(`${name}: ${allowed ? 304 : 403}`)
          // The entity tag of the cached page: a wider key's tag must not open it to a narrower key.
          const conditional = await request(ctx.app, path, auth, { headers: { 'if-none-match': tag } })
          outcomes.push(`${name}: ${conditional.statusCode}`)
          if (allowed) expect((await request(ctx.app, path, auth)).json()).toEqual(body)
          else expect(expectError(conditional, 403, 'insufficient_permissions').message).toContain(permission)
        }
      }
      expect(outcomes).toEqual(expected)
    },
    120_000,
  )
})
