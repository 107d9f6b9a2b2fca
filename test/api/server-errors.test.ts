import { sql } from 'kysely'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openSqliteConnection } from '../../src/db/dialects/sqlite-driver.js'
import { buildApiKey, buildForm, buildSubmission } from '../factories.js'
import { createTestContext, TEST_DIALECT, type TestContext } from '../harness.js'
import { expectError, expectList, GENEROUS_LIMITS, request } from '../security-suite.js'

const LEAKS =
  /stack|sqlite|select |from "|no such table|unexpected token|json|\.ts:|\.js:|node_modules|at \w+ \(/i

/**
 * Leaves submission `id` impossible to serve. Text that is not JSON cannot be stored as its `data`
 * any more (the database computes the JSON column from it, and refuses), so the column the API
 * reads is taken away instead.
 */
async function breakSubmission(ctx: TestContext, id: string, data: string): Promise<void> {
  await expect(
    sql`UPDATE submissions SET data = ${data} WHERE id = ${id}`.execute(ctx.database.db),
  ).rejects.toThrow()
  await sql`ALTER TABLE submissions DROP COLUMN json`.execute(ctx.database.db)
}

describe('internal errors and an unavailable database', () => {
  let ctx: TestContext
  let auth: string

  // Each test breaks the database its own way, so each gets a database of its own.
  beforeEach(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
    auth = (await buildApiKey(ctx.database.db)).authorization
  })
  afterEach(() => ctx.close())

  it('answers a failure inside a handler with a bare 500 internal_error, no stack trace and no detail', async () => {
    await buildForm(ctx.database.db, { id: 'form_corrupt' })
    await buildSubmission(ctx.database.db, { formId: 'form_corrupt', id: 'submission_corrupt' })
    await breakSubmission(ctx, 'submission_corrupt', '{not json')
    const res = await request(ctx.app, '/api/v1/forms/form_corrupt/submissions', auth)
    const body = expectError(res, 500, 'internal_error')
    expect(res.body).not.toMatch(LEAKS)
    expect(body.message).not.toContain('submission_corrupt')
    expect(res.headers['x-ratelimit-limit']).toBe('1000000')
    expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/)
    expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/)
  })

  it('answers an SQL failure with a 500 that shows no SQL text', async () => {
    await sql`DROP TABLE redirects`.execute(ctx.database.db)
    const res = await request(ctx.app, '/api/v1/page-builder/redirects', auth)
    expectError(res, 500, 'internal_error')
    expect(res.body).not.toMatch(LEAKS)
    expect(res.body).not.toContain('redirects')
  })

  it('keeps answering other requests after a 500', async () => {
    await sql`DROP TABLE redirects`.execute(ctx.database.db)
    expectError(await request(ctx.app, '/api/v1/page-builder/redirects', auth), 500, 'internal_error')
    expectList(await request(ctx.app, '/api/v1/page-builder', auth))
  })

  // SQLite's lock is the way to make its database unavailable; PostgreSQL outages are proven by
  // test/cluster/faults.test.ts, which stops the connection to a real server.
  it.runIf(TEST_DIALECT === 'sqlite')(
    'answers 503 service_unavailable with Retry-After while the database is locked, and recovers by itself',
    async () => {
      // Waiting the full busy timeout would only slow the test down.
      await sql`PRAGMA busy_timeout = 50`.execute(ctx.database.db)
      const fresh = await buildApiKey(ctx.database.db)
      const file = ctx.databaseUrl.slice('sqlite:'.length)
      const locker = openSqliteConnection(file)
      try {
        locker.exec('BEGIN EXCLUSIVE')
        locker.exec('UPDATE api_keys SET name = name')
        const res = await request(ctx.app, '/api/v1/forms', fresh.authorization)
        expectError(res, 503, 'service_unavailable')
        expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/)
        expect(res.body).not.toMatch(LEAKS)
        locker.exec('COMMIT')
      } finally {
        locker.close()
      }
      expectList(await request(ctx.app, '/api/v1/forms', fresh.authorization))
    },
  )
})

describe('every error in phrase form (ERROR_STYLE=phrase)', () => {
  let ctx: TestContext
  let auth: string

  beforeAll(async () => {
    ctx = await createTestContext({ errorStyle: 'phrase', perHour: 1000, perSecond: 1000 })
    auth = (await buildApiKey(ctx.database.db)).authorization
    await buildForm(ctx.database.db, { id: 'form_phrase' })
  })
  afterAll(() => ctx.close())

  it("uses 'Resource not found' for an unknown path and an unknown form, still naming the form", async () => {
    expectError(await request(ctx.app, '/api/v1/nope', auth), 404, 'resource_not_found', 'phrase')
    const body = expectError(
      await request(ctx.app, '/api/v1/forms/form_x/submissions', auth),
      404,
      'resource_not_found',
      'phrase',
    )
    expect(body.message).toContain('form_x')
  })

  it("uses 'Invalid parameters' for a bad query, keeping the explanatory message", async () => {
    const body = expectError(
      await request(ctx.app, '/api/v1/forms?pageSize=500', auth),
      400,
      'invalid_parameters',
      'phrase',
    )
    expect(body.message).toContain('between 1 and 100')
  })

  it("uses 'Method not allowed' for a write method", async () => {
    const res = await request(ctx.app, '/api/v1/forms', auth, { method: 'PUT', payload: {} })
    expectError(res, 405, 'method_not_allowed', 'phrase')
    expect(res.headers.allow).toBe('GET, HEAD')
  })

  it("uses 'Insufficient permissions' for a role without the permission", async () => {
    const editor = await buildApiKey(ctx.database.db, { role: 'editor' })
    expectError(
      await request(ctx.app, '/api/v1/forms/form_phrase/submissions', editor.authorization),
      403,
      'insufficient_permissions',
      'phrase',
    )
  })

  it("uses 'Internal server error' for a 500", async () => {
    // A database of its own: breaking a submission breaks the table for every later request.
    const own = await createTestContext({ errorStyle: 'phrase', perHour: 1000, perSecond: 1000 })
    try {
      const ownAuth = (await buildApiKey(own.database.db)).authorization
      await buildForm(own.database.db, { id: 'form_phrase' })
      await buildSubmission(own.database.db, { formId: 'form_phrase', id: 'submission_bad' })
      await breakSubmission(own, 'submission_bad', 'oops')
      expectError(
        await request(own.app, '/api/v1/forms/form_phrase/submissions', ownAuth),
        500,
        'internal_error',
        'phrase',
      )
    } finally {
      await own.close()
    }
  })
})

describe('the 429 in phrase form', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestContext({ errorStyle: 'phrase', perHour: 1, perSecond: 10 })
  })
  afterAll(() => ctx.close())

  it("uses 'Rate limit exceeded' and still asks to try again later", async () => {
    const key = await buildApiKey(ctx.database.db)
    await request(ctx.app, '/api/v1/forms', key.authorization)
    const res = await request(ctx.app, '/api/v1/forms', key.authorization)
    const body = expectError(res, 429, 'rate_limit_exceeded', 'phrase')
    expect(body.message).toMatch(/try again later/i)
    expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/)
  })
})
