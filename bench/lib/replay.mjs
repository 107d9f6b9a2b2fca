// The servers that replay one response of Lectern's: the bare `node:http` server (`bare-server.mjs`)
// and the framework's floor (`framework-server.mjs`), the floors a hot list is measured against.
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fetchRaw, ROOT, waitUntilReady } from './lectern.mjs'
import { freePort, onCpu, SERVER_CPU, stopProcess } from './processes.mjs'

/** Fetches `path` from Lectern on `port` with `key` and writes its exact answer to `file`, for the replaying servers. */
export async function writeFixture(port, path, key, file) {
  const answer = await fetchRaw(port, path, { authorization: `Bearer ${key}` })
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`)
  writeFileSync(
    file,
    JSON.stringify({ status: 200, rawHeaders: answer.rawHeaders, body: answer.body.toString('base64') }),
  )
}

/**
 * Starts a replaying server (`script` in `bench/lib/`) on the server's core, answering `fixtureFile`'s
 * bytes; under a `wrapper` command (valgrind) when given.
 */
export async function startReplay(script, fixtureFile, { wrapper = [], env = {} } = {}) {
  const port = await freePort()
  const [first, ...rest] = [...wrapper, process.execPath]
  const [command, args] = onCpu(SERVER_CPU, first, [
    ...rest,
    join(ROOT, 'bench', 'lib', script),
    fixtureFile,
    String(port),
  ])
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  await waitUntilReady(port, '/', child, 120_000)
  return { port, pid: child.pid, stop: () => stopProcess(child) }
}
