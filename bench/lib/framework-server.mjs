// The framework floor: a Fastify server that answers every GET with one fixture's status, headers and
// body, through the same shape of work Lectern's read path has in the framework (an async
// `onRequest` hook, as the API's pipeline; a callback one setting the request id; a callback
// `onResponse` hook, as the metrics; a route handler sending a kept buffer) and none of Lectern's
// own (no key lookup, no rate limit, no query parsing, no cache). Lectern minus this is what
// Lectern's own code costs a request; this minus the bare server is what the framework costs.
// Usage: node framework-server.mjs <fixture.json> <port>
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'

/** Headers Node or Fastify write themselves, and the one each request gets anew. */
const AUTOMATIC = new Set([
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'x-request-id',
])

const [fixtureFile, port] = process.argv.slice(2)
const fixture = JSON.parse(readFileSync(fixtureFile, 'utf8'))
const body = Buffer.from(fixture.body, 'base64')
const headers = {}
for (let i = 0; i < fixture.rawHeaders.length; i += 2) {
  const name = fixture.rawHeaders[i]
  if (!AUTOMATIC.has(name.toLowerCase())) headers[name] = fixture.rawHeaders[i + 1]
}

// Lectern's logger settings (a level above info, so no request is logged) and request ids.
const app = Fastify({ logger: { level: 'warn' }, requestIdHeader: false, genReqId: () => randomUUID() })
app.addHook('onRequest', (request, reply, done) => {
  reply.header('X-Request-Id', request.id)
  done()
})
app.addHook('onRequest', async () => {
  // The pipeline waits for its key lookup: one turn of the microtask queue stands for it here.
  await null
})
app.addHook('onResponse', (_request, _reply, done) => done())
app.get('*', (_request, reply) => {
  reply.code(fixture.status).headers(headers).send(body)
})
await app.listen({ port: Number(port), host: '127.0.0.1' })
process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
