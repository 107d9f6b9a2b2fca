import { rmSync } from 'node:fs'
import { loadConfig } from '../config.js'
import { migrateToLatest, openDatabase } from '../db/client.js'
import { ValidationError } from '../errors.js'
import { closeOnSignals, startServer } from '../server.js'
import { createServices } from '../services/index.js'
import { buildSampleContent } from '../services/sample-content.js'

/** Where the demo keeps its data unless DATABASE_URL says otherwise; recreated on every run. */
export const DEMO_DATABASE_FILE = './data/demo.db'
const DEMO_ADMIN_EMAIL = 'admin@example.com'

/**
 * `lectern demo`: a fresh database with sample content, a global admin and an API key, all printed
 * with ready-to-paste curl commands; then serves. With an explicit DATABASE_URL the database must be
 * empty, so the demo can never overwrite real data.
 */
export async function runDemo(options: { port?: string; host?: string }): Promise<void> {
  const explicit = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ''
  if (!explicit) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${DEMO_DATABASE_FILE}${suffix}`, { force: true })
  }
  const config = loadConfig(process.env, {
    PORT: options.port,
    HOST: options.host,
    DATABASE_URL: explicit ? undefined : `sqlite:${DEMO_DATABASE_FILE}`,
  })
  const database = openDatabase(config.DATABASE_URL)
  await migrateToLatest(database)
  const services = createServices(database)
  if ((await services.users.listUsers()).length > 0) {
    await database.close()
    throw new ValidationError(
      `The demo needs an empty database, but ${database.description} already has users`,
    )
  }

  await services.importer.importRecords(buildSampleContent())
  const { generatedPassword } = await services.users.createUser({
    email: DEMO_ADMIN_EMAIL,
    role: 'global_admin',
  })
  const { plainKey } = await services.keys.createApiKey({ name: 'Demo key', userEmail: DEMO_ADMIN_EMAIL })

  const server = await startServer(config, database)
  closeOnSignals(server)
  const base = server.url.replace('0.0.0.0', '127.0.0.1')
  const auth = `-H "Authorization: Bearer ${plainKey}"`
  console.log(
    [
      '',
      `Lectern demo is running at ${base} (database ${database.description})`,
      '',
      `  Dashboard:     ${base}/admin`,
      `  Global admin:  ${DEMO_ADMIN_EMAIL}`,
      `  Password:      ${generatedPassword}`,
      `  API key:       ${plainKey}`,
      '',
      'Try it:',
      `  curl ${auth} "${base}/api/v1/forms"`,
      `  curl ${auth} "${base}/api/v1/forms/form_contact/submissions?pageSize=5"`,
      `  curl ${auth} "${base}/api/v1/page-builder/redirects?active=true"`,
      '',
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  )
}
