// The limit every scenario is compared with: a bare node:http server that answers every request
// with the exact status, headers and body Lectern gave for the scenario's request, read from a
// fixture file. A POST is read to its end and answered 201 with a new id, as the intake answers a
// post in JSON (stored nowhere): the least a post can cost, for reads under writes.
// Usage: node bare-server.mjs <fixture.json> <port>
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

// Node writes these itself, as it does for Lectern, so they are left to it.
const AUTOMATIC = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

const [fixtureFile, port] = process.argv.slice(2)
const fixture = JSON.parse(readFileSync(fixtureFile, 'utf8'))
const body = Buffer.from(fixture.body, 'base64')
const headers = []
for (let i = 0; i < fixture.rawHeaders.length; i += 2) {
  if (!AUTOMATIC.has(fixture.rawHeaders[i].toLowerCase())) {
    headers.push(fixture.rawHeaders[i], fixture.rawHeaders[i + 1])
  }
}

let posts = 0

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(fixture.status, headers)
    res.end(body)
    return
  }
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    let status = 201
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      status = 400
    }
    const answer = JSON.stringify(status === 201 ? { id: `sub_bare${++posts}` } : { error: 'invalid_json' })
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(answer),
    })
    res.end(answer)
  })
})
server.keepAliveTimeout = 72_000
server.listen(Number(port), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
