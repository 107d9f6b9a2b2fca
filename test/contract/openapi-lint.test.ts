import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createConfig, lint } from '@redocly/openapi-core'
import { Document, Spectral } from '@stoplight/spectral-core'
import { Json } from '@stoplight/spectral-parsers'
import { oas } from '@stoplight/spectral-rulesets'
import { describe, expect, it } from 'vitest'
import { TEST_DIALECT } from '../harness.js'
import { OPENAPI_FILE } from './checker.js'

const file = fileURLToPath(OPENAPI_FILE)

/**
 * The committed document passes the two linters API tools are judged by, with nothing left over:
 * Spectral's `spectral:oas` ruleset and Redocly's `recommended` rules. The document does not depend
 * on the database, so this runs once, in the SQLite project.
 */
describe.runIf(TEST_DIALECT === 'sqlite')('openapi.json under the OpenAPI linters', () => {
  it("has no error, warning or hint under Spectral's spectral:oas ruleset", async () => {
    const spectral = new Spectral()
    spectral.setRuleset({ extends: [oas] } as Parameters<Spectral['setRuleset']>[0])
    const results = await spectral.run(new Document(readFileSync(file, 'utf8'), Json, file))
    expect(results.map((r) => `${r.code} at ${r.path.join('.') || '(root)'}: ${r.message}`)).toEqual([])
  })

  it("has no error or warning under Redocly's recommended rules", async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lint({ ref: file, config })
    expect(
      problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? ''}: ${p.message}`),
    ).toEqual([])
  })
})
