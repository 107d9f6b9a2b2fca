// Mutation testing of the core rule modules: `npm run test:mutation`, or one module at a time with
// `npm run test:mutation -- --mutate src/ratelimit/memory.ts`. Not part of `npm test`.

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // The unit tests of these modules only (vitest.mutation.config.ts, SQLite): the HTTP and dashboard
  // tests cover them too, but start servers and databases, far too slow to run once per mutant.
  // Related mode stays off: it finds no test for a mutant of a module's top level (a constant, a
  // pattern), which then survives whatever the tests say; per-test coverage already limits each
  // other mutant to the tests that reach it.
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  // Stryker rewrites the tsconfig's outside references for its sandbox with TypeScript's JavaScript
  // API, which TypeScript 7 no longer has; ours has none to rewrite, so it is pointed at no file.
  tsconfigFile: '',
  mutate: [
    'src/services/redirects/matcher.ts',
    'src/services/redirects/rules.ts',
    'src/resources/redirect-path.ts',
    'src/http/params.ts',
    'src/ratelimit/memory.ts',
    'src/services/key-format.ts',
    'src/http/api/v1/authorization.ts',
    'src/html.ts',
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
