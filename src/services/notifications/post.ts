import type { Agent as HttpAgent, IncomingMessage } from 'node:http'
import { request as httpRequest } from 'node:http'
import type { Agent as HttpsAgent } from 'node:https'
import { request as httpsRequest } from 'node:https'
import type { Outcome } from './outcome.js'

/** The most of a response body read (and kept as the attempt's error detail). */
const MAX_RESPONSE_BYTES = 65_536

/**
 * One webhook POST through the worker's agents: its outcome from the status code (410 Gone marked
 * `gone`), a timeout, or a connection error; at most {@link MAX_RESPONSE_BYTES} of the answer read.
 */
export function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: { agents: { http: HttpAgent; https: HttpsAgent }; signal: AbortSignal; timeoutMs: number },
): Promise<Outcome> {
  const { agents, signal, timeoutMs } = options
  return new Promise((resolve) => {
    const secure = url.protocol === 'https:'
    const request = (secure ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: secure ? agents.https : agents.http,
      signal,
    })
    const timer = setTimeout(() => {
      request.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'TIMEOUT' }))
    }, timeoutMs)
    const finish = (outcome: Outcome) => {
      clearTimeout(timer)
      resolve(outcome)
    }
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({
        ok: false,
        lastStatus:
          error.code === 'TIMEOUT'
            ? 'timeout'
            : error.code === 'EADDRREFUSED'
              ? 'refused'
              : 'connection_error',
        responseCode: null,
        error: error.message,
      }),
    )
    request.on('response', (response: IncomingMessage) => {
      const code = response.statusCode ?? 0
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        if (size < MAX_RESPONSE_BYTES) chunks.push(chunk)
        size += chunk.length
        // Past the cap the rest is not read: the connection is dropped instead.
        if (size > MAX_RESPONSE_BYTES) response.destroy()
      })
      const done = () => {
        const ok = code >= 200 && code < 300
        const text = Buffer.concat(chunks).subarray(0, 1000).toString('utf8')
        finish({
          ok,
          lastStatus: ok ? 'delivered' : code === 410 ? 'gone' : `http_${code}`,
          responseCode: code,
          error: ok ? null : text || null,
          gone: code === 410,
        })
      }
      response.on('end', done)
      response.on('close', done)
      response.on('error', () => {})
    })
    request.end(body)
  })
}
