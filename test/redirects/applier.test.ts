import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRedirectApplier } from '../../src/services/redirects/applier.js'
import { exportRedirects } from '../../src/services/redirects/exports.js'
import { createTestContext, type TestContext } from '../harness.js'
import { caseFile, casesFor, insertCaseRedirects } from './support.js'

describe('the redirect matcher of the current content', () => {
  let ctx: TestContext
  beforeEach(async () => {
    ctx = await createTestContext()
    await insertCaseRedirects(ctx.database.db)
  })
  afterEach(() => ctx.close())

  it('loads every active redirect in batches and answers every case as the spec says', async () => {
    const applier = createRedirectApplier(ctx.database.db, { batchSize: 2 })
    const loaded = []
    for await (const rule of applier.activeRedirects()) loaded.push(rule.fromPath)
    expect(loaded).toEqual(caseFile.redirects.filter((r) => r.isActive).map((r) => r.fromPath))
    const matcher = await applier.matcher()
    for (const c of casesFor('core')) expect(matcher.match(c.target), c.name).toEqual(c.expect)
  })

  it('reuses the matcher while the content version stands, and builds one for simultaneous callers', async () => {
    const applier = ctx.services.redirectApplier
    const [first, second] = await Promise.all([applier.matcher(), applier.matcher()])
    expect(second).toBe(first)
    expect(await applier.matcher()).toBe(first)
  })

  it('rebuilds the matcher after a redirect changes, so the change applies at once', async () => {
    const applier = ctx.services.redirectApplier
    const before = await applier.matcher()
    expect(before.match('/brand-new')).toBeNull()
    await ctx.services.redirects.createRedirect({ fromPath: '/brand-new', toPath: '/old', type: 'temporary' })
    const after = await applier.matcher()
    expect(after).not.toBe(before)
    expect(after.match('/brand-new?x=1')).toEqual({ status: 302, location: '/new?x=1' })
  })

  it('exports a CSV that imports back into another database with the same answers, chains flattened', async () => {
    const csv = [...exportRedirects('csv', (await ctx.services.redirectApplier.matcher()).rules())].join('')
    const other = await createTestContext()
    try {
      const result = await other.services.redirects.importCsv(csv)
      expect(result.created).toBe(caseFile.redirects.filter((r) => r.isActive).length)
      expect(result.chainCount).toBe(0)
      const matcher = await other.services.redirectApplier.matcher()
      for (const c of casesFor('core')) expect(matcher.match(c.target), c.name).toEqual(c.expect)
    } finally {
      await other.close()
    }
  })

  it('drops a redirect from the matcher once it is switched off', async () => {
    const applier = ctx.services.redirectApplier
    expect((await applier.matcher()).match('/old')).not.toBeNull()
    await ctx.services.redirects.setRedirectActive('redirect_case_01', false)
    expect((await applier.matcher()).match('/old')).toBeNull()
  })
})
