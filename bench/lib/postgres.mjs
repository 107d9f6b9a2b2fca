import { connect } from 'node:net'
import pg from 'pg'

/** Whether PostgreSQL answers at `url` within a couple of seconds; the reason when it does not. */
export async function postgresProblem(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return null
  } catch (error) {
    return `PostgreSQL not reachable at ${redact(url)}: ${error.message}`
  } finally {
    await client.end().catch(() => {})
  }
}

/** Whether Redis answers PING at `url`; the reason when it does not. */
export function redisProblem(url) {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) })
    const done = (problem) => {
      socket.destroy()
      resolve(problem)
    }
    socket.setTimeout(2000, () => done(`Redis not reachable at ${url}: timed out`))
    socket.on('error', (error) => done(`Redis not reachable at ${url}: ${error.message}`))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (data) =>
      done(data.toString().startsWith('+PONG') ? null : `Redis at ${url} answered ${data.toString().trim()}`),
    )
  })
}

/** Runs statements on the base database (creating and dropping the benchmark's schema). */
export async function postgresExec(url, statement) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/** The base URL with the schema selected through `search_path`, as Lectern's own tests do. */
export function withSchema(url, schema) {
  const separator = url.includes('?') ? '&' : '?'
  return `${url}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`
}

const redact = (url) => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')

/** The base URL with another database of the same server. */
export function withDatabase(url, database) {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}
