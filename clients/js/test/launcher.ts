import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/** The repository's root, where `spec/` and `scripts/` live. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** What `scripts/client-test-server.mjs` prints: where it listens and its named keys. */
export interface TestServer {
  baseUrl: string
  keys: Record<string, string>
  /** Closes the launcher's stdin, which stops it and removes its files; resolves once it exited. */
  stop(): Promise<void>
}

/**
 * Starts the shared client test server (the contract every official client tests against): a real
 * Lectern on a free port with `spec/client-fixture.json` imported. Needs `npm run build` first.
 */
export async function startTestServer(): Promise<TestServer> {
  if (!existsSync(`${REPOSITORY_ROOT}dist/server.js`))
    throw new Error('The client test server runs the built server: run `npm run build` first')
  const child: ChildProcess = spawn(process.execPath, ['scripts/client-test-server.mjs'], {
    cwd: REPOSITORY_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`client-test-server exited with ${code}: ${stderr}`)))
  })
  const { baseUrl, keys } = JSON.parse(line) as { baseUrl: string; keys: Record<string, string> }
  return {
    baseUrl,
    keys,
    stop: () => {
      child.stdin?.end()
      return exited
    },
  }
}
