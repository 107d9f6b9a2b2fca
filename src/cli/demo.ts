import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import { ValidationError } from '../errors.js'
import { closeOnSignals, type RunningServer, startServer } from '../server.js'
import { createServices } from '../services/index.js'
import { buildSampleContent } from '../services/sample-content.js'
import { databaseLocation } from './context.js'
import { DEMO_DATABASE_FILE, lockDatabaseFile, shellWord } from './demo-lock.js'
import { type CliIo, writeLine } from './io.js'

/** Where the demo keeps its data unless DATABASE_URL says otherwise; recreated on every run. */
const DEMO_ADMIN_EMAIL = 'admin@example.com'

/**
 * `lectern demo`: a fresh database with sample content, a global admin and an API key, all printed
 * with ready-to-paste curl commands; then serves. With an explicit DATABASE_URL the database must be
 * empty, so the demo can never overwrite real data.
 *
 * Nothing is touched until the port is known to be free and the database file is locked to this
 * process, so a second demo started by mistake fails with one line and leaves the first one's data
 * alone. Requests are not logged unless LOG_LEVEL is set, so the printed key stays on screen.
 */
export async function runDemo(io: CliIo, options: { port?: string; host?: string }): Promise<void> {
  const { env } = io
  const explicit = env.DATABASE_URL !== undefined && env.DATABASE_URL !== ''
  const config = loadConfig(env, {
    PORT: options.port,
    HOST: options.host,
    DATABASE_URL: explicit ? undefined : `sqlite:${DEMO_DATABASE_FILE}`,
    LOG_LEVEL: env.LOG_LEVEL ? undefined : 'warn',
  })
  await ensurePortIsFree(config.HOST, config.PORT)
  const file = config.DATABASE_URL.startsWith('sqlite:') ? config.DATABASE_URL.slice(7) : undefined
  if (file && file !== ':memory:') lockDatabaseFile(file)
  if (!explicit) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${DEMO_DATABASE_FILE}${suffix}`, { force: true })
  }
  const database = openDatabase(config.DATABASE_URL, { backgroundCheckpoints: true })
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

  let server: RunningServer
  try {
    server = await startServer(config, database)
  } catch (error) {
    await database.close()
    throw error
  }
  closeOnSignals(server)
  const base = server.url.replace('0.0.0.0', '127.0.0.1')
  const auth = `-H "Authorization: Bearer ${plainKey}"`
  const location = databaseLocation(database)
  const cli = file
    ? [
        "The CLI opens ./data/lectern.db unless DATABASE_URL says otherwise. To work on the demo's data",
        '(the CLI example of the README included), run this first in the shell you use the CLI from:',
        `  export DATABASE_URL=${shellWord(location)}`,
        'or name the database on each command:',
        `  DATABASE_URL=${shellWord(location)} ./bin/lectern keys list`,
      ]
    : [
        "The CLI opens ./data/lectern.db unless DATABASE_URL says otherwise; to work on the demo's data:",
        '  ./bin/lectern keys list   (with the same DATABASE_URL as this demo)',
      ]
  writeLine(
    io.stdout,
    [
      '',
      `Lectern demo is running at ${base} (database ${location})`,
      '',
      ...(config.ADMIN_DASHBOARD === 'on' ? [`  Dashboard:     ${base}/admin`] : []),
      ...(config.API_REFERENCE === 'on' ? [`  API reference: ${base}/docs`] : []),
      `  Global admin:  ${DEMO_ADMIN_EMAIL}`,
      `  Password:      ${generatedPassword}`,
      `  API key:       ${plainKey}`,
      '',
      'Try it:',
      `  curl ${auth} "${base}/api/v1/forms"`,
      `  curl ${auth} "${base}/api/v1/forms/form_contact/submissions?pageSize=5"`,
      `  curl ${auth} "${base}/api/v1/page-builder/redirects?active=true"`,
      '',
      ...cli,
      '',
      env.LOG_LEVEL
        ? `Logging at ${config.LOG_LEVEL} as JSON lines below.`
        : 'Requests are not logged (set LOG_LEVEL=info to see each one as a JSON line).',
      `Sign in as ${DEMO_ADMIN_EMAIL} with password ${generatedPassword}; API key ${plainKey}`,
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  )
}

/**
 * Fails with the listen error (EADDRINUSE and the like, which the CLI turns into one line) when
 * `host:port` cannot be bound. Checked before anything is deleted: a demo already serving there
 * is most likely another run of this demo, whose database must survive.
 */
function ensurePortIsFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()))
  })
}
