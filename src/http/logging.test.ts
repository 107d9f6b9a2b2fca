import Fastify, { type FastifyBaseLogger } from 'fastify'
import { describe, expect, it } from 'vitest'
import { collectedLines } from '../../test/log-lines.js'
import { REDACTED, redactingLoggerOptions, redactUrl } from './logging.js'

describe('a logged URL', () => {
  it('keeps the values of ordinary parameters as they are', () => {
    for (const url of [
      '/api/v1/forms?page=2&pageSize=20',
      '/api/v1/forms/frm_1/submissions?filter=unread&page=1',
      '/api/v1/redirects',
      '/f/frm_1?next=/thanks',
    ])
      expect(redactUrl(url)).toBe(url)
  })

  it('hides the value of every secret-looking parameter, however its name is spelled', () => {
    const spellings = [
      'api_key',
      'API_KEY',
      'apikey',
      'key',
      'Key',
      'token',
      'Access_Token',
      'password',
      '%6B%65%79', // "key", percent-encoded
      'api%5Fkey',
      'pass%77ord',
      '\u212Aey', // the Kelvin sign lower-cases to "k"
      '+token+',
    ]
    for (const name of spellings) {
      expect(redactUrl(`/api/v1/forms?page=1&${name}=lk_live_secret&pageSize=5`)).toBe(
        `/api/v1/forms?page=1&${name}=${REDACTED}&pageSize=5`,
      )
      expect(redactUrl(`GET /x?${name}=lk_live_secret#top failed`)).toBe(
        `GET /x?${name}=${REDACTED}#top failed`,
      )
    }
  })

  it('keeps parameters whose names only contain a secret word', () => {
    expect(redactUrl('/x?keyword=a&tokens=b&monkey=c')).toBe('/x?keyword=a&tokens=b&monkey=c')
  })
})

describe('a log line', () => {
  /** One line written by a Fastify logger with Lectern's options (pino, as the app has it). */
  async function logOnce(write: (logger: FastifyBaseLogger) => void): Promise<Record<string, unknown>> {
    const { lines, stream } = collectedLines()
    const app = Fastify({ logger: { level: 'trace', ...redactingLoggerOptions(), stream } })
    write(app.log)
    await app.close()
    expect(lines()).toHaveLength(1)
    return lines()[0] as Record<string, unknown>
  }

  it('replaces credential headers wherever a log call nests them', async () => {
    const line = await logOnce((logger) =>
      logger.info(
        {
          req: { method: 'GET', url: '/x?token=t', headers: { authorization: 'Bearer lk_live_a' } },
          options: { headers: { Cookie: 'session=s', 'X-API-Key': 'lk_live_b', accept: 'text/html' } },
          headers: { 'set-cookie': ['session=s'], 'proxy-authorization': 'Basic x' },
        },
        'plugin detail',
      ),
    )
    const text = JSON.stringify(line)
    for (const secret of ['lk_live_a', 'lk_live_b', 'session=s', 'Basic x', 'token=t'])
      expect(text).not.toContain(secret)
    expect(line.options).toEqual({
      headers: { Cookie: REDACTED, 'X-API-Key': REDACTED, accept: 'text/html' },
    })
    expect(line.headers).toEqual({ 'set-cookie': REDACTED, 'proxy-authorization': REDACTED })
    expect(line.req).toEqual({ method: 'GET', url: `/x?token=${REDACTED}` })
  })
})
