import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// @ts-expect-error: the benchmark is plain JavaScript, without declarations.
import { startReplay } from '../../bench/lib/replay.mjs'

// The bare server is the limit every scenario is compared with: the reads get exactly the fixture's
// bytes, and the posts of reads under writes an answer the writer counts as taken (201 with an id).

const body = JSON.stringify({ data: [{ id: 'frm_1' }], meta: { total: 1 } })
let dir: string
let server: { port: number; stop(): Promise<void> } | undefined
let port: number

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lectern-bare-'))
  const fixture = join(dir, 'fixture.json')
  writeFileSync(
    fixture,
    JSON.stringify({
      status: 200,
      rawHeaders: ['Content-Type', 'application/json; charset=utf-8', 'ETag', '"v1"', 'Date', 'x'],
      body: Buffer.from(body).toString('base64'),
    }),
  )
  // Started as the benchmarks start it (`lib/replay.mjs`).
  server = await startReplay('bare-server.mjs', fixture)
  port = (server as { port: number }).port
})

afterAll(async () => {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('the bare server', () => {
  it("answers every GET with the fixture's status, headers and body", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/forms?page=1`)
    expect(response.status).toBe(200)
    expect(response.headers.get('etag')).toBe('"v1"')
    expect(await response.text()).toBe(body)
  })

  it('answers a JSON post 201 with a new id each time, as the intake does', async () => {
    const post = () =>
      fetch(`http://127.0.0.1:${port}/f/frm_1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Ada', email: 'ada@example.com' }),
      })
    const answers = await Promise.all([post(), post()])
    expect(answers.map((answer) => answer.status)).toEqual([201, 201])
    const ids = await Promise.all(answers.map(async (answer) => ((await answer.json()) as { id: string }).id))
    expect(ids[0]).toMatch(/^sub_/)
    expect(new Set(ids).size).toBe(2)
  })

  it('refuses a post whose body is not JSON', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/f/frm_1`, { method: 'POST', body: '{nope' })
    expect(response.status).toBe(400)
  })
})
