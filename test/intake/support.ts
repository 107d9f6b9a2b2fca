import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { buildForm } from '../factories.js'
import type { TestContext } from '../harness.js'

export interface HttpAnswer {
  status: number
  headers: IncomingHttpHeaders
  body: string
  json: () => Record<string, unknown>
}

/** Listens on a free port of 127.0.0.1 and returns the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ port: 0, host: '127.0.0.1' })
}

/** One real HTTP request; `body` is sent as given (a string or bytes). */
export function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: text,
          json: () => JSON.parse(text) as Record<string, unknown>,
        })
      })
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end(body)
  })
}

export const FORM = 'application/x-www-form-urlencoded'
export const JSON_TYPE = 'application/json'

/** Posts urlencoded `fields` to `/f/{formId}`; `json` asks for JSON mode through `Accept`. */
export function postForm(
  base: string,
  formId: string,
  fields: string | Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const body = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString()
  return send(base, 'POST', `/f/${formId}`, { 'content-type': FORM, ...headers }, body)
}

export function postJson(
  base: string,
  formId: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return send(base, 'POST', `/f/${formId}`, { 'content-type': JSON_TYPE, ...headers }, JSON.stringify(body))
}

/** A multipart body of `parts` (a part with `filename` is a file) and its Content-Type. */
export function multipart(parts: { name: string; value: string; filename?: string }[]): {
  contentType: string
  body: Buffer
} {
  const boundary = '----lecternTestBoundary7MA4YWxk'
  const text = parts
    .map(
      (part) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${
          part.filename === undefined ? '' : `; filename="${part.filename}"\r\nContent-Type: text/plain`
        }\r\n\r\n${part.value}\r\n`,
    )
    .join('')
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.from(`${text}--${boundary}--\r\n`),
  }
}

/** A form taking posts with `settings` (enabled unless they say otherwise). */
export async function intakeForm(
  ctx: TestContext,
  settings: Record<string, unknown> = {},
  form: { active?: boolean; title?: string; description?: string | null } = {},
): Promise<string> {
  const { id } = await buildForm(ctx.database.db, form)
  await ctx.services.intake.updateSettings(id, { enabled: true, ...settings })
  return id
}
