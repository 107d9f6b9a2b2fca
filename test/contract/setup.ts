import { afterAll, afterEach } from 'vitest'
import { takeContractViolations } from './recorder.js'

// Every app the harness builds checks its responses against openapi.json; a test during which one
// broke the contract fails here, with what was wrong.
function failOnContractViolations() {
  const violations = takeContractViolations()
  if (violations.length > 0) {
    throw new Error(`Responses that do not match openapi.json:\n  ${violations.join('\n  ')}`)
  }
}

afterEach(failOnContractViolations)
afterAll(failOnContractViolations)
