import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exportRedirects, type RedirectExportFormat } from '../../src/services/redirects/exports.js'
import { createRedirectMatcher } from '../../src/services/redirects/matcher.js'
import {
  asRedirect,
  caseFile,
  casesFor,
  hasBinary,
  type RunningServer,
  rawGet,
  startApache,
  startCaddy,
  startNginx,
} from './support.js'

const exported = (format: RedirectExportFormat) =>
  [...exportRedirects(format, createRedirectMatcher(caseFile.redirects).rules())].join('')

interface WebServer {
  runtime: 'nginx' | 'apache' | 'caddy'
  binary: string
  start: (exported: string) => Promise<RunningServer>
  /** Set for a server that always sends an absolute Location (from the Host header), stripped before comparing. */
  absoluteLocation?: boolean
}

const SERVERS: WebServer[] = [
  { runtime: 'nginx', binary: 'nginx', start: startNginx },
  { runtime: 'apache', binary: '/usr/sbin/apache2', start: startApache, absoluteLocation: true },
  { runtime: 'caddy', binary: 'caddy', start: startCaddy },
]

for (const server of SERVERS) {
  const installed = hasBinary(server.binary)
  if (!installed) {
    if (process.env.CI) {
      it(`finds ${server.binary} installed (CI runs every web server)`, () => {
        expect.fail(
          `${server.binary} is not installed; CI must install it to prove the ${server.runtime} export`,
        )
      })
      continue
    }
    console.warn(
      `\n!!! ${server.binary} is not installed: the ${server.runtime} export is NOT tested here !!!\n`,
    )
  }

  // No database involved: the servers run once, in the SQLite project.
  const inThisProject = process.env.LECTERN_TEST_DATABASE !== 'postgres'
  describe.skipIf(!installed || !inThisProject)(
    `the ${server.runtime} export, served by ${server.runtime}`,
    () => {
      let running: RunningServer
      beforeAll(async () => {
        running = await server.start(exported(server.runtime))
      }, 30_000)
      afterAll(async () => {
        await running?.stop()
      })

      it.each(casesFor(server.runtime).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
        const answer = await rawGet(running.port, c.target)
        const origin = server.absoluteLocation ? 'http://localhost' : undefined
        expect(asRedirect(answer, origin), `${c.target} (server log: ${running.output()})`).toEqual(c.expect)
      })
    },
  )
}
