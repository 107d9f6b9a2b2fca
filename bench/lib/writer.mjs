// A second process writing to one form at a steady rate while the load generator reads. Two kinds
// of write:
// - `intake` (the default): a visitor's post, `POST /f/{formId}` to the server being measured, each
//   from one of 100 client addresses (`X-Forwarded-For`, the server trusting its proxy): a new
//   submission on page 1 of the form, inserted by the server itself, as a site's forms do;
// - `updates`: marks submissions of the form read and unread in turn (single-row updates through
//   Lectern's own database layer, as the dashboard's inbox does), for builds without intake.
// Usage: node writer.mjs '<json options>' with { home, databaseUrl, formId, rate, kind, port, paused,
// sink } (`databaseUrl` null: posts to the bare server, which stores nothing to delete).
// Prints READY once writing (or, with `paused`, ready to), and on SIGTERM `WROTE <n> <seconds>
// <failed> <sunk>`, the seconds being those it was writing to the server and <sunk> the posts its
// sink took (intake posts are then deleted again, so a cached database keeps its dataset's totals).
// SIGUSR1 starts writing to the server, SIGUSR2 stops it: the load generator turns it on and off to
// read with and without writes in alternate slices of one run. With `sink` (intake posts only), SIGUSR2 sends the same posts at the
// same pace to a sink in this process instead of stopping (a socket answering each post 201 with
// canned bytes, storing nothing): the writer's work on the load generator's core, which it shares,
// is then the same on both sides of a comparison, and only where its posts land differs.
import { connect, createServer } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const {
  home,
  databaseUrl,
  formId,
  rate,
  kind = 'intake',
  port,
  paused = false,
  sink: sinking = false,
} = JSON.parse(process.argv[2])
if (sinking && kind !== 'intake') throw new Error('a sink takes intake posts only')

/**
 * One write; resolves to whether it was taken (an intake post must be answered 201), or null for a
 * post to the sink.
 */
let write
let close = async () => {}

/** Whether writes go to the sink now (paused, with a sink): they are then the sink's, not counted. */
let toSink = false
/** The posts the sink answered. */
let sunkPosts = 0

if (kind === 'intake') {
  const poster = createPoster(port, `/f/${formId}`)
  const sink = sinking ? createPoster(await startSink(), `/f/${formId}`) : null
  let sequence = 0
  // The submissions posted, deleted again at the end so a cached database keeps its dataset's totals.
  const posted = []
  write = async () => {
    const n = sequence++
    const sunk = toSink
    const answer = await (sunk ? sink : poster).post(
      JSON.stringify({
        name: `Writer ${n}`,
        email: `writer${n}@example.com`,
        message: 'A post sent while the list is read.',
      }),
      `10.0.0.${(n % 100) + 1}`,
    )
    if (sunk) {
      if (answer?.status === 201) sunkPosts++
      return null
    }
    if (answer?.status !== 201) return false
    posted.push(JSON.parse(answer.body).id)
    return true
  }
  close = async () => {
    poster.close()
    sink?.close()
    // The bare server stores nothing: no database to tidy.
    if (databaseUrl === null) return
    const { openDatabase } = await import(pathToFileURL(join(home, 'dist', 'db', 'database.js')).href)
    const database = openDatabase(databaseUrl)
    for (let i = 0; i < posted.length; i += 500) {
      await database.db
        .deleteFrom('submissions')
        .where('id', 'in', posted.slice(i, i + 500))
        .execute()
    }
    await database.close()
  }
} else {
  const { openDatabase } = await import(pathToFileURL(join(home, 'dist', 'db', 'database.js')).href)
  const database = openDatabase(databaseUrl)
  const db = database.db
  // The form's newest submissions: its page 1, which the readers ask for, is what a write changes.
  const ids = (
    await db
      .selectFrom('submissions')
      .select('id')
      .where('form_id', '=', formId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(200)
      .execute()
  ).map((row) => row.id)
  if (ids.length === 0) throw new Error(`form ${formId} has no submissions`)
  let next = 0
  write = async () => {
    const id = ids[next++ % ids.length]
    await db
      .updateTable('submissions')
      .set((eb) => ({ is_read: eb(eb.val(1), '-', eb.ref('is_read')), updated_at: new Date().toISOString() }))
      .where('id', '=', id)
      .execute()
    return true
  }
  close = () => database.close()
}

let wrote = 0
let failed = 0
let stopping = false
const interval = 1000 / rate
// Writing time so far, and when the current stretch of writing began (null while paused).
let writingMs = 0
let since = paused ? null : performance.now()
let wake = () => {}
// Paused, the loop waits on nothing else that would keep the process alive.
const keepAlive = setInterval(() => {}, 60_000)
process.once('SIGTERM', () => {
  stopping = true
  wake()
})
// Posting to the sink keeps the pace of posting to the server: one schedule runs across both.
let sinkSince = null
let sinkMs = 0
const paceMs = () =>
  writingMs +
  sinkMs +
  (since === null ? 0 : performance.now() - since) +
  (sinkSince === null ? 0 : performance.now() - sinkSince)
process.on('SIGUSR1', () => {
  if (since !== null) return
  if (sinkSince !== null) {
    sinkMs += performance.now() - sinkSince
    sinkSince = null
  }
  toSink = false
  since = performance.now()
  wake()
})
process.on('SIGUSR2', () => {
  if (since !== null) {
    writingMs += performance.now() - since
    since = null
  }
  if (!sinking || sinkSince !== null) return
  toSink = true
  sinkSince = performance.now()
  wake()
})
// Only once the handlers are in place: a SIGUSR1 that came before them would start Node's inspector
// instead of the writes (the reader of READY may run, and signal, before this process goes on).
process.stdout.write('READY\n')
// Posts are sent on schedule whatever the answers (up to 64 in flight), so a slow answer does not
// lower the rate; updates, made in this process, run one at a time.
const maxInFlight = kind === 'intake' ? 64 : 1
const inFlight = new Set()
let sent = 0
while (!stopping) {
  if (since === null && sinkSince === null) {
    await new Promise((resolve) => {
      wake = resolve
    })
    continue
  }
  const pending = write().then((ok) => {
    if (ok === false) failed++
    inFlight.delete(pending)
  })
  inFlight.add(pending)
  if (!toSink) wrote++
  sent++
  if (inFlight.size >= maxInFlight) await Promise.race(inFlight)
  // Evenly paced over the time spent writing (to the server or the sink): the next write is due once
  // that time reaches `sent` intervals, so pausing and resuming neither skips writes nor bunches them.
  const wait = sent * interval - paceMs()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
}
if (since !== null) writingMs += performance.now() - since
clearInterval(keepAlive)
await Promise.all(inFlight)
await close()
process.stdout.write(`WROTE ${wrote} ${(writingMs / 1000).toFixed(2)} ${failed} ${sunkPosts}\n`)

/**
 * The sink: a server in this process on a free port that answers every request it reads whole (its
 * headers and `Content-Length` bytes of body) with a canned 201, as the intake answers a JSON post.
 * It parses no more than that: its cost is kept to the sockets' own, which posting to a server has too.
 */
async function startSink() {
  const answer =
    'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"id":"sub_sink"}'
  const server = createServer((socket) => {
    socket.setNoDelay(true)
    let buffered = ''
    socket.setEncoding('latin1')
    socket.on('error', () => {})
    socket.on('data', (chunk) => {
      buffered += chunk
      for (let message = wholeMessage(buffered); message !== null; message = wholeMessage(buffered)) {
        buffered = buffered.slice(message.end)
        socket.write(answer)
      }
    })
  })
  server.unref()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server.address().port
}

/**
 * The first whole HTTP message in `buffered`, read as latin1 (a character a byte): where its headers
 * end and where it ends (its `Content-Length` bytes of body after them); null until all of it came.
 */
function wholeMessage(buffered) {
  const headerEnd = buffered.indexOf('\r\n\r\n')
  if (headerEnd === -1) return null
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(buffered.slice(0, headerEnd))?.[1] ?? 0)
  const end = headerEnd + 4 + length
  return buffered.length < end ? null : { headerEnd, end }
}

/**
 * Posts over raw keep-alive sockets, one request in flight on each: the writer shares the load
 * generator's core, and Node's HTTP client spent about 0.7 ms of CPU per post there (14% of a core
 * at 195 posts/s), which the load generator then lacked. Answers are JSON with a Content-Length.
 */
function createPoster(port, path) {
  const idle = []
  const queued = []
  let open = 0
  const MAX_SOCKETS = 64

  function request(body, address) {
    return (
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Forwarded-For: ${address}\r\n\r\n${body}`
    )
  }

  function newSocket() {
    open++
    const socket = connect(port, '127.0.0.1')
    socket.setNoDelay(true)
    let buffered = ''
    let current = null
    // Answers are ASCII (a status and an id), which latin1 reads as it reads bytes.
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => {
      buffered += chunk
      const message = current === null ? null : wholeMessage(buffered)
      if (message === null) return
      const { headerEnd, end } = message
      const answer = { status: Number(buffered.slice(9, 12)), body: buffered.slice(headerEnd + 4, end) }
      const closing = /\r\nconnection: *close/i.test(buffered.slice(0, headerEnd))
      buffered = ''
      const done = current
      current = null
      done(answer)
      if (closing) socket.destroy()
      else release(socket)
    })
    const fail = () => {
      open--
      const index = idle.indexOf(socket)
      if (index !== -1) idle.splice(index, 1)
      if (current !== null) current(null)
      current = null
    }
    // An error is followed by 'close', which fails the post in flight.
    socket.on('error', () => {})
    socket.once('close', fail)
    socket.send = (text, resolve) => {
      current = resolve
      socket.write(text)
    }
    return socket
  }

  function release(socket) {
    const next = queued.shift()
    if (next !== undefined) socket.send(next.text, next.resolve)
    else idle.push(socket)
  }

  return {
    post(body, address) {
      return new Promise((resolve) => {
        const text = request(body, address)
        const socket = idle.pop() ?? (open < MAX_SOCKETS ? newSocket() : undefined)
        if (socket === undefined) queued.push({ text, resolve })
        else socket.send(text, resolve)
      })
    },
    close() {
      for (const socket of idle) socket.destroy()
    },
  }
}
