import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

/** The environment the benchmark's servers get, read in a process of its own with `env` set. */
function serverEnv(env: Record<string, string>): Record<string, string> {
  const script = `import('./bench/lib/lectern.mjs').then(({ lecternEnv }) =>
    process.stdout.write(JSON.stringify(lecternEnv('sqlite:/tmp/x.db', { HOST: '127.0.0.1' }))))`
  const output = execFileSync(process.execPath, ['-e', script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  })
  return JSON.parse(output)
}

describe("the benchmark's servers", () => {
  it('log at warn unless BENCH_LOG_LEVEL names another level, whatever LOG_LEVEL the shell has', () => {
    expect(serverEnv({}).LOG_LEVEL).toBe('warn')
    expect(serverEnv({ LOG_LEVEL: 'debug' }).LOG_LEVEL).toBe('warn')
    expect(serverEnv({ BENCH_LOG_LEVEL: 'info' }).LOG_LEVEL).toBe('info')
  })

  it('count every request but refuse none, and reach Redis only when a server is given it', () => {
    const env = serverEnv({ REDIS_URL: 'redis://127.0.0.1:6379/0' })
    expect(env.DATABASE_URL).toBe('sqlite:/tmp/x.db')
    expect(env.HOST).toBe('127.0.0.1')
    expect(Number(env.RATE_LIMIT_PER_SECOND)).toBeGreaterThanOrEqual(1e9)
    expect(Number(env.RATE_LIMIT_PER_HOUR)).toBeGreaterThanOrEqual(1e9)
    expect(env.REDIS_URL).toBeUndefined()
  })
})
