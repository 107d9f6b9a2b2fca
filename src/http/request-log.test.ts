import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { redactingLoggerOptions } from './logging.js'
import { RequestLog } from './request-log.js'

/** A Fastify app logging as Lectern's does, whose `/broken` route has an `onResponse` hook that fails. */
async function appWithLines(level: 'info' | 'warn') {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  const app = Fastify({
    logger: { level, ...redactingLoggerOptions(), stream },
    logController: new RequestLog(),
  })
  app.get('/fine', async () => ({ ok: true }))
  app.register(async (broken) => {
    broken.addHook('onResponse', (_request, _reply, done) => done(new Error('the hook failed')))
    broken.get('/broken', async () => ({ ok: true }))
  })
  await app.ready()
  return { app, lines }
}

describe('the request log', () => {
  it('writes a request whose answer failed after it was sent as one error line naming it', async () => {
    const { app, lines } = await appWithLines('warn')
    const answer = await app.inject({ method: 'GET', url: '/broken?token=lk_live_secret&page=2' })
    // The client already has its answer; the failure is the server's to report.
    expect(answer.statusCode).toBe(200)
    await app.close()
    const errored = lines.filter((line) => line.msg === 'request errored')
    expect(errored).toHaveLength(1)
    expect(errored[0]).toMatchObject({
      level: 50,
      req: { method: 'GET', url: '/broken?token=[redacted]&page=2' },
      res: { statusCode: 200 },
      err: { type: 'Error', message: 'the hook failed' },
    })
    expect(typeof errored[0]?.responseTime).toBe('number')
    expect(JSON.stringify(lines)).not.toContain('lk_live_secret')
  })

  it('logs an answered request at info and nothing of it at warn', async () => {
    for (const level of ['info', 'warn'] as const) {
      const { app, lines } = await appWithLines(level)
      expect((await app.inject({ method: 'GET', url: '/fine' })).statusCode).toBe(200)
      await app.close()
      const completed = lines.filter((line) => line.msg === 'request completed')
      expect(completed).toHaveLength(level === 'info' ? 1 : 0)
      if (level === 'info')
        expect(completed[0]).toMatchObject({
          level: 30,
          req: { method: 'GET', url: '/fine' },
          res: { statusCode: 200 },
        })
    }
  })
})
