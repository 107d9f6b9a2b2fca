import { defineConfig } from 'vitest/config'

/**
 * The unit tests of the core rule modules, on their own, for mutation testing (stryker.config.mjs).
 * Every mutant runs the tests that reached its code, and a mutant of a module's top level (a
 * constant, a pattern) runs all of these: the whole list takes seconds, not the suite's minutes.
 */
export const MUTATION_TESTS = [
  'src/html.test.ts',
  'src/http/api/v1/authorization.test.ts',
  'src/http/params.test.ts',
  'src/ratelimit/memory.test.ts',
  'src/resources/redirect-path.test.ts',
  'src/services/key-format.test.ts',
  'src/services/redirects/rules.test.ts',
  'test/redirects/matcher.test.ts',
]

export default defineConfig({
  test: {
    name: 'sqlite',
    include: MUTATION_TESTS,
    env: { LECTERN_TEST_DATABASE: 'sqlite' },
    testTimeout: 30_000,
  },
})
