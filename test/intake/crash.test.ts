import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Instance, startInstance } from '../cluster/support.js'
import { createTestContext, type TestContext } from '../harness.js'
import { GENEROUS_LIMITS } from '../security-suite.js'
import { intakeForm, postJson } from './support.js'

// Posts are answered only once the transaction their group shares has committed: a server killed
// at any moment must have kept every post it answered.
describe('a server killed with SIGKILL while posts arrive', () => {
  let ctx: TestContext
  let instance: Instance | undefined

  beforeAll(async () => {
    ctx = await createTestContext(GENEROUS_LIMITS)
  })
  afterAll(async () => {
    await instance?.stop('SIGKILL')
    await ctx.close()
  })

  it('has stored every post it answered with 201', async () => {
    const form = await intakeForm(ctx)
    instance = await startInstance({
      DATABASE_URL: ctx.databaseUrl,
      INTAKE_RATE_LIMIT_PER_MINUTE: '1000000',
    })
    const { url } = instance
    const answered: string[] = []
    let killed = false
    let sent = 0
    // Forty clients posting back to back, so groups of several posts are being written when it dies.
    const client = async () => {
      while (!killed) {
        const n = String(sent++)
        try {
          const answer = await postJson(url, form, { n }, { accept: 'application/json' })
          if (answer.status === 201) answered.push(answer.json().id as string)
        } catch {
          return
        }
      }
    }
    const clients = Array.from({ length: 40 }, client)
    while (answered.length < 300) await new Promise((resolve) => setTimeout(resolve, 5))
    await instance.stop('SIGKILL')
    killed = true
    await Promise.all(clients)

    const stored = await ctx.database.db
      .selectFrom('submissions')
      .select('id')
      .where('form_id', '=', form)
      .execute()
    const storedIds = new Set(stored.map((row) => row.id))
    expect(answered.filter((id) => !storedIds.has(id))).toEqual([])
    // Posts still in flight when it died were either committed or never answered: nothing else.
    expect(stored.length).toBeGreaterThanOrEqual(answered.length)
    expect(stored.length).toBeLessThanOrEqual(sent)
  }, 60_000)
})
