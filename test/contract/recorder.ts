import type { FastifyInstance } from 'fastify'
import { contractChecker } from './checker.js'

const violations: string[] = []

/**
 * Checks every response `app` sends (through `inject()` or real HTTP) against the committed OpenAPI
 * document, and records each mismatch for `takeContractViolations`. The vitest setup file
 * (`test/contract/setup.ts`) fails the running test when any was recorded.
 */
export function checkResponsesAgainstContract(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : ''
    let problems: string[]
    try {
      problems = contractChecker().check({
        method: request.method,
        url: request.url,
        statusCode: reply.statusCode,
        headers: reply.getHeaders(),
        body,
      })
    } catch (error) {
      // A failing check must fail the test, never change the response under test.
      problems = [`the check itself failed: ${error instanceof Error ? error.stack : String(error)}`]
    }
    if (problems.length > 0) {
      violations.push(
        `${request.method} ${request.url} answered ${reply.statusCode}:\n    ${problems.join('\n    ')}`,
      )
    }
    return payload
  })
}

/** The mismatches recorded since the last call. */
export function takeContractViolations(): string[] {
  return violations.splice(0)
}
