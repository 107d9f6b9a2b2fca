// One load-generator run, in its own process so it can be pinned to its own core.
// Usage: node load-worker.mjs '<json options>'. Prints "MEASURING" when the warm-up is over and the
// measured run starts, then one line "RESULT <json>".
//
// Load comes from autocannon (closed loop: each connection sends its next request when the last
// answer arrives; with `overallRate`, each connection sends its share of a second's requests back
// to back, then waits for the next second). With `paced`, requests are instead sent on a fixed
// schedule (open loop) over a pool of keep-alive connections whatever the answers do, so a slow
// answer delays those queued behind it instead of holding back the load (no coordinated omission);
// paced posts use exactly `connections` connections, the clients they stand for.
//
// Latency is recorded here from each response's own timing in microseconds; autocannon's summary
// rounds latencies to whole milliseconds, too coarse for sub-millisecond answers.
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import autocannon from 'autocannon'
import { createRandom } from './random.mjs'

const options = JSON.parse(process.argv[2])

/** Latency samples in milliseconds, grown as needed. */
function createRecorder() {
  let samples = new Float64Array(1 << 16)
  let count = 0
  return {
    add(ms) {
      if (count === samples.length) {
        const grown = new Float64Array(samples.length * 2)
        grown.set(samples)
        samples = grown
      }
      samples[count++] = ms
    },
    values() {
      return samples.subarray(0, count)
    },
    summary() {
      const sorted = samples.slice(0, count).sort()
      const at = (q) => (count === 0 ? null : sorted[Math.min(count - 1, Math.ceil(q * count) - 1)])
      let sum = 0
      for (const value of sorted) sum += value
      const round = (v) => (v === null ? null : Math.round(v * 1000) / 1000)
      return {
        mean: round(count === 0 ? null : sum / count),
        p50: round(at(0.5)),
        p90: round(at(0.9)),
        p99: round(at(0.99)),
        p999: round(at(0.999)),
        max: round(count === 0 ? null : sorted[count - 1]),
      }
    },
  }
}

/** The path of each request: fixed, or a random page of the form on each request. */
function pathPicker(seedSuffix) {
  if (!options.random) return () => options.path
  const { prefix, maxPage, pageSize, total, seed, sizeParam = 'pageSize' } = options.random
  const pick = createRandom(`${seed}${seedSuffix}`)
  if (pageSize === 'random') {
    // Any size from 1 to 100, then any page that size has: every page asked for holds rows.
    return () => {
      const size = pick.int(1, 100)
      return `${prefix}page=${pick.int(1, Math.ceil(total / size))}&${sizeParam}=${size}`
    }
  }
  return () => `${prefix}page=${pick.int(1, maxPage)}&${sizeParam}=${pageSize}`
}

/**
 * Posts (`options.post`: { body, contentType, addresses }): every request sends the same body, from
 * one of `addresses` client addresses in turn (`X-Forwarded-For`, for a server that trusts its
 * proxy), so a per-address limit sees that many clients.
 */
function postHeaders() {
  const { contentType, addresses } = options.post
  let sequence = 0
  return () => {
    const n = sequence++ % addresses
    return {
      ...options.headers,
      'content-type': contentType,
      'x-forwarded-for': `10.${Math.floor(n / 65536) % 256}.${Math.floor(n / 256) % 256}.${(n % 256) + 1}`,
    }
  }
}

function postRequests() {
  const nextHeaders = postHeaders()
  return [
    {
      method: 'POST',
      setupRequest: (req) => {
        req.headers = nextHeaders()
        req.body = options.post.body
        return req
      },
    },
  ]
}

async function runAutocannon(duration, seedSuffix, recorder) {
  const nextPath = pathPicker(seedSuffix)
  const instance = autocannon({
    // `origin` for a server elsewhere (a peer such as Directus); Lectern and the bare server listen here.
    url: `${options.origin ?? `http://127.0.0.1:${options.port}`}${options.path}`,
    headers: options.headers,
    connections: options.connections,
    pipelining: 1,
    duration,
    timeout: 30,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    ...(options.post ? { requests: postRequests() } : {}),
    ...(options.random
      ? {
          requests: [
            {
              method: 'GET',
              setupRequest: (req) => {
                req.path = nextPath()
                return req
              },
            },
          ],
        }
      : {}),
  })
  const slicer = recorder && options.slices ? createSlicer(options.slices) : null
  if (recorder) {
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode >= 300) return
      recorder.add(responseTime)
      slicer?.add(responseTime)
    })
  }
  const result = await instance
  slicer?.stop()
  return {
    ...(slicer ? { interleaved: slicer.summary() } : {}),
    reqPerSec: result.requests.average,
    requests: result.requests.total,
    durationS: result.duration,
    bytesPerSec: result.throughput.average,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count]),
    ),
  }
}

function runPaced(duration, seedSuffix, recorder) {
  const nextPath = pathPicker(seedSuffix)
  const nextPostHeaders = options.post ? postHeaders() : null
  // Posts keep to the clients they stand for: a visitor waits for one answer before posting again.
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections * (options.post ? 1 : 4) })
  const interval = 1000 / options.paced
  const statusCodes = {}
  let ok = 0
  let errors = 0
  let bytes = 0
  let inFlight = 0
  const started = performance.now()
  const end = started + duration * 1000
  let due = started
  let sent = 0
  return new Promise((resolve) => {
    const finish = () => {
      agent.destroy()
      const elapsedS = (performance.now() - started) / 1000
      resolve({
        reqPerSec: ok / elapsedS,
        requests: sent,
        durationS: Math.round(elapsedS * 100) / 100,
        bytesPerSec: bytes / elapsedS,
        ok,
        non2xx: sent - ok - errors,
        errors,
        timeouts: 0,
        statusCodes,
      })
    }
    const send = (sentAt) => {
      sent++
      inFlight++
      const req = request(
        {
          host: '127.0.0.1',
          port: options.port,
          path: nextPath(),
          ...(options.post ? { method: 'POST', headers: nextPostHeaders() } : { headers: options.headers }),
          agent,
        },
        (res) => {
          res.on('data', (chunk) => {
            bytes += chunk.length
          })
          res.on('end', () => {
            statusCodes[res.statusCode] = (statusCodes[res.statusCode] ?? 0) + 1
            if (res.statusCode >= 200 && res.statusCode < 300) {
              ok++
              recorder?.add(performance.now() - sentAt)
            }
            if (--inFlight === 0 && due >= end) finish()
          })
        },
      )
      req.setTimeout(30_000, () => req.destroy(new Error('timeout')))
      req.on('error', () => {
        errors++
        if (--inFlight === 0 && due >= end) finish()
      })
      req.end(options.post?.body)
    }
    // Sends whatever is due, then sleeps until the next request is due; latency counts from the
    // moment a request is handed to the connection pool (a timer firing late is the client's delay).
    const tick = () => {
      const now = performance.now()
      while (due <= now && due < end) {
        send(now)
        due += interval
      }
      if (due < end) setTimeout(tick, Math.max(0, due - performance.now()))
      else if (inFlight === 0) finish()
    }
    tick()
  })
}

/** The server's CPU time so far, in clock ticks (10 ms), from its own accounting. */
function serverTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/**
 * Reads with and without writes in alternate slices of one run (`slices`: { ms, writerPid,
 * serverPid, guardMs }): the writer is turned off in even slices (its posts go to its sink, or it
 * pauses) and writes to the server in odd ones, so both sides of each pair meet the same machine a
 * fraction of a second apart. Answers count for the slice they arrive in,
 * except in its first and last `guardMs`, while the writer's change takes effect; the server's CPU
 * time is read at each slice's edges.
 */
function createSlicer({ ms, writerPid, serverPid, guardMs = 50 }) {
  const started = performance.now()
  const slices = []
  const open = () => {
    const index = slices.length
    const on = index % 2 === 1
    process.kill(writerPid, on ? 'SIGUSR1' : 'SIGUSR2')
    slices.push({
      on,
      answers: 0,
      recorder: createRecorder(),
      ticksAtStart: serverTicks(serverPid),
      ticks: null,
    })
  }
  // A slice ended by its timer is whole; the one the run's end cuts short is left out of the pairs.
  const close = (whole) => {
    const slice = slices.at(-1)
    if (slice && slice.ticks === null) {
      slice.ticks = serverTicks(serverPid) - slice.ticksAtStart
      slice.whole = whole
    }
  }
  // Each edge is timed from the start, so that late timers do not add up.
  let timer
  const next = () => {
    timer = setTimeout(
      () => {
        close(true)
        open()
        next()
      },
      Math.max(0, started + slices.length * ms - performance.now()),
    )
  }
  open()
  next()
  return {
    add(latencyMs) {
      const at = performance.now() - started
      const index = Math.floor(at / ms)
      const within = at - index * ms
      const slice = slices[index]
      if (slice === undefined || within < guardMs || within > ms - guardMs) return
      slice.answers++
      slice.recorder.add(latencyMs)
    },
    stop() {
      clearTimeout(timer)
      close(false)
      process.kill(writerPid, 'SIGUSR2')
    },
    summary() {
      // Whole pairs only: a slice the run's end cut short is left out, and its pair with it.
      const pairs = []
      for (let i = 0; i + 1 < slices.length; i += 2) {
        const [off, on] = [slices[i], slices[i + 1]]
        if (!off.whole || !on.whole) break
        const countedS = (ms - 2 * guardMs) / 1000
        const side = (slice) => ({
          reqPerSec: Math.round((slice.answers / countedS) * 10) / 10,
          p99: slice.recorder.summary().p99,
          serverCpuMsPer1k:
            slice.answers > 0
              ? Math.round(((slice.ticks * 10) / (slice.answers / countedS) / (ms / 1000)) * 1000 * 10) / 10
              : null,
        })
        pairs.push({ off: side(off), on: side(on) })
      }
      const all = (on) => {
        const recorder = createRecorder()
        let answers = 0
        let ticks = 0
        for (const slice of slices.slice(0, pairs.length * 2).filter((s) => s.on === on)) {
          answers += slice.answers
          ticks += slice.ticks
          for (const value of slice.recorder.values()) recorder.add(value)
        }
        const seconds = (pairs.length * (ms - 2 * guardMs)) / 1000
        return {
          reqPerSec: seconds > 0 ? Math.round((answers / seconds) * 10) / 10 : null,
          latencyMs: recorder.summary(),
          // CPU over the whole slices, answers over their counted part: scaled to the same time.
          serverCpuMsPer1k:
            answers > 0
              ? Math.round(((ticks * 10) / (answers * (ms / (ms - 2 * guardMs)))) * 1000 * 10) / 10
              : null,
        }
      }
      return { sliceMs: ms, guardMs, pairs, off: all(false), on: all(true) }
    },
  }
}

const fire = options.paced ? runPaced : runAutocannon
if (options.warmup > 0) await fire(options.warmup, ':warmup', null)
process.stdout.write('MEASURING\n')
const recorder = createRecorder()
const cpuBefore = process.cpuUsage()
const summary = await fire(options.duration, '', recorder)
const cpu = process.cpuUsage(cpuBefore)
const cpuMs = (cpu.user + cpu.system) / 1000
process.stdout.write(`RESULT ${JSON.stringify({ ...summary, latencyMs: recorder.summary(), cpuMs })}\n`)
