import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { collectedLines } from '../../test/log-lines.js'
import { redactingLoggerOptions } from './logging.js'
import { RequestLog } from './request-log.js'

describe('the request log', () => {
  it('writes a request whose answer failed after it was sent as one error line naming it', async () => {
    const { lines, stream } = collectedLines()
    const app = Fastify({
      logger: { level: 'warn', ...redactingLoggerOptions(), stream },
      logController: new RequestLog(),
    })
    app.addHook('onResponse', (_request, _reply, done) => done(new Error('the hook failed')))
    app.get('/broken', async () => ({ ok: true }))
    const answer = await app.inject({ method: 'GET', url: '/broken?token=lk_live_secret&page=2' })
    // The client already has its answer; the failure is the server's to report.
    expect(answer.statusCode).toBe(200)
    await app.close()
    const errored = lines().filter((line) => line.msg === 'request errored')
    expect(errored).toHaveLength(1)
    expect(errored[0]).toMatchObject({
      level: 50,
      req: { method: 'GET', url: '/broken?token=[redacted]&page=2' },
      res: { statusCode: 200 },
      err: { type: 'Error', message: 'the hook failed' },
      responseTime: expect.any(Number),
    })
    expect(JSON.stringify(lines())).not.toContain('lk_live_secret')
  })
})
