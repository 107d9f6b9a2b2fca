import { buildApiKey } from '../../../test/factories.js'
import { createTestContext, type TestContext, type TestContextOptions } from '../../../test/harness.js'
import { type FetchFunction, Lectern, type LecternOptions } from '../src/index.js'

export interface RunningLectern {
  ctx: TestContext
  /** Where the server listens, e.g. `http://127.0.0.1:41234`. */
  baseUrl: string
  /** `Bearer …`-less API key of a global admin. */
  apiKey: string
  /** A client of this server with the admin's key; `options` override the defaults. */
  client(options?: Partial<LecternOptions>): Lectern
}

/** A real Lectern server listening on a free port, with an admin's key. */
export async function startLectern(options: TestContextOptions = {}): Promise<RunningLectern> {
  const ctx = await createTestContext(options)
  const baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' })
  const { plainKey: apiKey } = await buildApiKey(ctx.database.db)
  return { ctx, baseUrl, apiKey, client: (overrides) => new Lectern({ baseUrl, apiKey, ...overrides }) }
}

/** A `fetch` that records the status of every response it passes on, and the URL asked for. */
export function recordingFetch(): { fetch: FetchFunction; calls: { url: string; status: number }[] } {
  const calls: { url: string; status: number }[] = []
  return {
    calls,
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      calls.push({ url: input, status: response.status })
      return response
    },
  }
}
