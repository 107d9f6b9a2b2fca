// Mutation testing of the core rule modules: `npm run test:mutation`, or one module at a time with
// `npm run test:mutation -- --mutate src/ratelimit/memory.ts`. Not part of `npm test`.

// The pure modules are judged by the SQLite project alone; vitest.config.ts then leaves the
// PostgreSQL project out, so a mutant never waits on PostgreSQL or Redis.
process.env.LECTERN_TEST_DATABASE = 'sqlite'

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // Each mutant runs the unit tests that import its module (vitest related mode) and reach its code.
  // The HTTP and dashboard tests cover these modules too, but start servers and databases: far too
  // slow to run once per mutant, so the score measures what the fast unit tests pin down.
  vitest: { configFile: 'vitest.config.ts', related: true },
  testFiles: [
    'src/ratelimit/memory.test.ts',
    'src/services/redirect-rules.test.ts',
    'src/services/key-format.test.ts',
    'src/http/params.test.ts',
    'src/http/api/v1/authorization.test.ts',
    'src/admin/html.test.ts',
    'test/redirects/matcher.test.ts',
  ],
  coverageAnalysis: 'perTest',
  // Stryker rewrites the tsconfig's outside references for its sandbox with TypeScript's JavaScript
  // API, which TypeScript 7 no longer has; ours has none to rewrite, so it is pointed at no file.
  tsconfigFile: '',
  mutate: [
    'src/services/redirect-matcher.ts',
    'src/services/redirect-rules.ts',
    'src/http/params.ts',
    'src/ratelimit/memory.ts',
    'src/services/key-format.ts',
    'src/http/api/v1/authorization.ts',
    'src/admin/html.ts',
  ],
  concurrency: 2,
  timeoutMS: 20_000,
  ignorePatterns: [
    'dist',
    'data',
    'coverage',
    'reports',
    'bench/data',
    'bench/results',
    'test-results',
    'clients/python',
    'clients/php',
  ],
  tempDirName: '.stryker-tmp',
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  thresholds: { high: 95, low: 90, break: 90 },
}
