import { type ChildProcess, spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'

// The writer of reads under writes: turned on and off by the load generator, slice by slice. With a
// sink, its posts go on at the same pace while it is off, to a socket of its own, so that its work on
// the load generator's core is the same on both sides of each pair; only the server's posts count.

const RATE = 200
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let server: Server | undefined
let writer: ChildProcess | undefined

afterEach(async () => {
  writer?.kill('SIGKILL')
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
  writer = undefined
})

/** A server that answers each intake post 201 with a new id, and counts them. */
async function countingServer(): Promise<{ port: number; posts: () => number }> {
  let posts = 0
  server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      posts++
      const body = JSON.stringify({ id: `sub_${posts}` })
      response.writeHead(201, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      })
      response.end(body)
    })
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as AddressInfo).port, posts: () => posts }
}

/** Starts the writer, paused, posting to `port`; resolves once it is READY, with its output so far. */
async function startWriter(port: number, sink: boolean) {
  const options = {
    home: process.cwd(),
    databaseUrl: null,
    formId: 'frm_1',
    rate: RATE,
    kind: 'intake',
    port,
    paused: true,
    sink,
  }
  writer = spawn(process.execPath, ['bench/lib/writer.mjs', JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let stdout = ''
  writer.stdout?.on('data', (chunk) => {
    stdout += String(chunk)
  })
  await new Promise<void>((resolve, reject) => {
    writer?.stdout?.on('data', () => stdout.includes('READY\n') && resolve())
    writer?.once('exit', (code) => reject(new Error(`the writer exited (${code})`)))
  })
  const child = writer
  return {
    signal: (name: NodeJS.Signals) => child.kill(name),
    /** Stops it and reads its last line: posts to the server, their seconds, failures, posts sunk. */
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
      const [, wrote, seconds, failed, sunk] = /WROTE (\d+) ([\d.]+) (\d+) (\d+)/.exec(stdout) ?? []
      return { wrote: Number(wrote), seconds: Number(seconds), failed: Number(failed), sunk: Number(sunk) }
    },
  }
}

/**
 * Runs the writer on `port` for `onMs`, turns it off for `offMs`, and stops it: how many posts the
 * server had when it was turned off (once those in flight were answered), whether it got any more
 * while off, and the writer's own count.
 */
async function onThenOff(sink: boolean, onMs: number, offMs: number) {
  const target = await countingServer()
  const started = await startWriter(target.port, sink)
  started.signal('SIGUSR1')
  await sleep(onMs)
  started.signal('SIGUSR2')
  // Posts already sent are answered within a moment (a busy machine's moment); none is sent after it.
  await sleep(200)
  const whenOff = target.posts()
  await sleep(offMs)
  const moreWhileOff = target.posts() - whenOff
  return { whenOff, moreWhileOff, received: target.posts(), result: await started.stop() }
}

/** The server got posts while the writer was on, none once it was off, and the writer counted them. */
function expectPostsOnlyWhileOn(run: Awaited<ReturnType<typeof onThenOff>>) {
  expect(run.whenOff).toBeGreaterThan(0)
  expect(run.moreWhileOff).toBe(0)
  expect(run.result.wrote).toBe(run.received)
}

describe('the writer', () => {
  it('sends its posts to its sink while turned off, and counts only those the server took', async () => {
    const run = await onThenOff(true, 400, 400)
    expectPostsOnlyWhileOn(run)
    const { result } = run
    expect(result.failed).toBe(0)
    // 0.6 s of sink at 200 posts/s: the pace went on while the server got nothing, and the
    // seconds counted are the server's 0.4 (bounds a busy machine's timers keep).
    expect(result.sunk).toBeGreaterThan(RATE * 0.2)
    expect(result.seconds).toBeLessThan(0.55)
  })

  it('without a sink, posts nothing while turned off', async () => {
    const run = await onThenOff(false, 300, 300)
    expectPostsOnlyWhileOn(run)
    expect(run.result.sunk).toBe(0)
  })
})
