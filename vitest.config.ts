import { connect } from 'node:net'
import { defineConfig } from 'vitest/config'

/** Whether something listens on host:port; the PostgreSQL project needs its database and Redis. */
function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host)
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

// Pure unit tests need no database: they run once, in the SQLite project.
const UNIT_TESTS = ['src/ratelimit/memory.test.ts', 'src/services/redirect-rules.test.ts']

export default defineConfig(async () => {
  const servicesUp = (await reachable('127.0.0.1', 5432)) && (await reachable('127.0.0.1', 6379))
  // On a laptop without PostgreSQL and Redis their project is left out; in CI it always runs and
  // fails loudly if they are missing.
  const withPostgres = servicesUp || Boolean(process.env.CI)
  if (!withPostgres) console.warn('PostgreSQL or Redis not reachable: running the SQLite project only')
  return {
    test: {
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      pool: 'forks',
      testTimeout: 30_000,
      hookTimeout: 30_000,
      projects: [
        { extends: true, test: { name: 'sqlite', env: { LECTERN_TEST_DATABASE: 'sqlite' } } },
        ...(withPostgres
          ? [
              {
                extends: true,
                test: { name: 'postgres', exclude: UNIT_TESTS, env: { LECTERN_TEST_DATABASE: 'postgres' } },
              },
            ]
          : []),
      ],
    },
  }
})
