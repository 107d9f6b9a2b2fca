import { connect } from 'node:net'
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config'

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

// Pure unit tests need no database: they run once, in the SQLite project. So do the JS client's
// tests: they prove the client, and the server behaviour they meet is proven on both databases by
// the server's own tests.
const UNIT_TESTS = [
  'src/html.test.ts',
  'src/ids.test.ts',
  'test/bench/reads-under-writes.test.ts',
  'src/resources/readers.test.ts',
  'src/http/api/v1/authorization.test.ts',
  'src/http/api/v1/response-cache.test.ts',
  'src/db/group-commit.test.ts',
  'src/http/params.test.ts',
  'src/ratelimit/memory.test.ts',
  'src/ratelimit/intake.test.ts',
  'src/services/key-format.test.ts',
  'src/services/redirects/rules.test.ts',
  'test/db/migrations-frozen.test.ts',
  'test/docs/links.test.ts',
  'test/architecture/**',
  'clients/js/test/**',
]
// Behaviour that no database changes, proven once on SQLite: scrypt's CPU and memory under a burst
// of sign-ins, the HTTP server's own socket timeouts, and the post limit's script in Redis.
const ONCE_TESTS = [
  'test/hardening/password-hashing.test.ts',
  'test/hardening/server-timeouts.test.ts',
  'test/intake/redis-limiter.test.ts',
]
// Several server processes sharing PostgreSQL and Redis, and their faults: PostgreSQL project only.
const CLUSTER_TESTS = ['test/cluster/**']
// Files whose every test concerns one database (each also says so with `runIf`): the other project
// would only load and skip them.
const SQLITE_ONLY_TESTS = [
  'test/cli/database-file.test.ts',
  'test/cli/help.test.ts',
  'test/contract/openapi-lint.test.ts',
  'test/db/sqlite-driver.test.ts',
  'test/db/sqlite-file.test.ts',
  'test/db/sqlite-statements.test.ts',
  'test/db/background-checkpoints.test.ts',
  'test/docs/reference-browser.test.ts',
  'test/first-hour/demo-and-cli.test.ts',
  'test/first-hour/install.test.ts',
  'test/redirects/matcher.test.ts',
  'test/redirects/platforms.test.ts',
  'test/redirects/web-servers.test.ts',
]
const POSTGRES_ONLY_TESTS = ['test/api/rate-limit-batches.test.ts', 'test/import/bulk-statistics.test.ts']
// The dashboard in Chromium: its HTTP tests already run on both databases, the browser once.
const BROWSER_TESTS = ['test/browser/**']

const sqlite: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: 'sqlite',
    exclude: [...configDefaults.exclude, ...CLUSTER_TESTS, ...POSTGRES_ONLY_TESTS],
    env: { LECTERN_TEST_DATABASE: 'sqlite' },
  },
}
const postgres: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: 'postgres',
    exclude: [
      ...configDefaults.exclude,
      ...UNIT_TESTS,
      ...ONCE_TESTS,
      ...BROWSER_TESTS,
      ...SQLITE_ONLY_TESTS,
    ],
    env: { LECTERN_TEST_DATABASE: 'postgres' },
  },
}

const shared = {
  include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'clients/js/test/**/*.test.ts'],
  // Fails a test during which the app answered something openapi.json does not describe, and hashes
  // new passwords at a low scrypt cost outside the tests of hashing (test/password-cost.ts).
  setupFiles: ['test/contract/setup.ts', 'test/password-cost.ts'],
  globalSetup: ['test/global-setup.ts'],
  pool: 'forks' as const,
  // A worker runs file after file in one process, importing the app once rather than once per file
  // (the whole run: 1,050 s → 750 s on two cores). Every test builds its own database and app, and
  // no test changes module state, so files still cannot see each other's data.
  isolate: false,
  // Vitest's default on a 2-core machine is one worker; most tests wait on a database, a child
  // process or a socket, so two keep both cores busy.
  maxWorkers: Number(process.env.LECTERN_TEST_WORKERS ?? 2),
  // Generous: tests that start CLI processes one after another share two cores with the other worker.
  testTimeout: 60_000,
  hookTimeout: 30_000,
}

export default defineConfig(async () => {
  const servicesUp = (await reachable('127.0.0.1', 5432)) && (await reachable('127.0.0.1', 6379))
  // On a laptop without PostgreSQL and Redis their project is left out; in CI it always runs and
  // fails loudly if they are missing.
  const withPostgres = servicesUp || Boolean(process.env.CI)
  if (!withPostgres) {
    console.warn('PostgreSQL or Redis not reachable: running the SQLite project only')
    // Read by test/global-setup.ts, which repeats the warning when the run ends.
    process.env.LECTERN_POSTGRES_SKIPPED = '1'
  }
  return { test: { ...shared, projects: withPostgres ? [sqlite, postgres] : [sqlite] } }
})
